package txnverify

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire/security/clientsec"
)

// KgoTransport sends over the inter-broker listener with one franz-go
// client per broker, kept until Close and replaced when the broker's
// address changes (as the transaction marker sender does). Before a
// client's first request it asks the broker's ApiVersions once: without
// AddPartitionsToTxn v4 Send answers ErrUnsupported, never a v3 request
// (which would add, not verify).
type KgoTransport struct {
	// Endpoint is the broker's inter-broker address (host:port).
	Endpoint func(broker int32) (addr string, ok bool)
	ClientID string
	// Security is the inter-broker listener's client security (TLS,
	// SASL); set it before the first Send. Zero = PLAINTEXT.
	Security clientsec.Client

	mu      sync.Mutex
	closed  bool
	clients map[int32]*kgoClient
}

type kgoClient struct {
	addr string
	cl   *kgo.Client
	// maxVersion is the broker's AddPartitionsToTxn max version; -2 not
	// asked yet.
	maxVersion int16
}

// NewKgoTransport returns a transport resolving brokers with endpoint.
func NewKgoTransport(endpoint func(broker int32) (string, bool), clientID string) *KgoTransport {
	return &KgoTransport{Endpoint: endpoint, ClientID: clientID, clients: map[int32]*kgoClient{}}
}

// Send implements Transport.
func (t *KgoTransport) Send(ctx context.Context, broker int32, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
	addr, ok := t.Endpoint(broker)
	if !ok {
		return nil, fmt.Errorf("no endpoint known for broker %d", broker)
	}
	c, err := t.client(broker, addr)
	if err != nil {
		return nil, err
	}
	b := c.cl.SeedBrokers()[0]
	if c.maxVersion == -2 { // only this broker's sender goroutine touches it
		avr := kmsg.NewPtrApiVersionsRequest()
		// v3+ requires a software name and version (KIP-511).
		avr.ClientSoftwareName, avr.ClientSoftwareVersion = "gregor", "1"
		kresp, err := b.Request(ctx, avr)
		if err != nil {
			return nil, err
		}
		av, ok := kresp.(*kmsg.ApiVersionsResponse)
		if !ok {
			return nil, fmt.Errorf("unexpected response %T to ApiVersions", kresp)
		}
		if av.ErrorCode != 0 {
			return nil, fmt.Errorf("ApiVersions: %w", kerr.ErrorForCode(av.ErrorCode))
		}
		c.maxVersion = -1
		for _, k := range av.ApiKeys {
			if k.ApiKey == req.Key() {
				c.maxVersion = k.MaxVersion
			}
		}
	}
	if c.maxVersion < 4 {
		return nil, ErrUnsupported
	}
	kresp, err := b.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, ok := kresp.(*kmsg.AddPartitionsToTxnResponse)
	if !ok {
		return nil, fmt.Errorf("unexpected response %T to AddPartitionsToTxn", kresp)
	}
	return resp, nil
}

func (t *KgoTransport) client(broker int32, addr string) (*kgoClient, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("transaction verifier closed")
	}
	if c := t.clients[broker]; c != nil {
		if c.addr == addr {
			return c, nil
		}
		c.cl.Close()
		delete(t.clients, broker)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(t.ClientID)}, t.Security.SetupOpts(0)...)...)
	if err != nil {
		return nil, err
	}
	c := &kgoClient{addr: addr, cl: cl, maxVersion: -2}
	t.clients[broker] = c
	return c, nil
}

// Close implements Transport: every client is closed; later sends fail.
func (t *KgoTransport) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for id, c := range t.clients {
		c.cl.Close()
		delete(t.clients, id)
	}
}
