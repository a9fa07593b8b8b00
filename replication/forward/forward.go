// Package forward sends an admin request that only the active controller
// can carry out (CreateTopics, DeleteTopics, CreatePartitions,
// ElectLeaders, AlterPartitionReassignments, ListPartitionReassignments)
// from the broker a client asked to the controller, as KRaft Kafka's
// ForwardingManager does (KIP-590), so that a client which sent it to any
// broker gets the controller's answer instead of NOT_CONTROLLER.
//
// Gregor forwards with its own inter-broker client, not with an Envelope
// (API 58): the receiving broker authorizes the request fully with the
// client's principal first and forwards only what the client may do; the
// controller then sees a request from the forwarding broker's inter-broker
// principal (a super user, or one with the ACLs the operation needs), the
// same way it sees the broker's other inter-broker requests. A client can
// therefore never gain more than its own ACLs by asking another broker.
package forward

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire/security/clientsec"
)

// ErrLocal is Send's error when the active controller is this broker
// (it became controller after the caller asked): the caller runs the
// operation locally.
var ErrLocal = errors.New("forward: this broker is the active controller")

// ErrNoController is Send's error when no broker holds /controller (an
// election is under way) until the deadline: NOT_CONTROLLER for the
// client, which retries.
var ErrNoController = errors.New("forward: no active controller")

// ErrTimeout is Send's error when the controller did not answer before
// the deadline (unreachable, or slower than the request's timeout):
// REQUEST_TIMED_OUT for the client, as Kafka's forwarding answers.
var ErrTimeout = errors.New("forward: the controller did not answer in time")

// ClientIDPrefix starts the client.id of every forwarded request
// ("gregor-forward-<broker.id>", ClientID): the controller tells
// forwarded requests by it (with the inter-broker principal's
// ClusterAction when an authorizer is set; see the handlers'
// forwardedToUs), and does not charge their controller mutations again.
const ClientIDPrefix = "gregor-forward-"

// ClientID is the client.id broker forwards with.
func ClientID(broker int32) string { return ClientIDPrefix + strconv.Itoa(int(broker)) }

// Config is what New needs.
type Config struct {
	// Self is this broker's broker.id.
	Self int32
	// Controller reads the active controller's id from /controller
	// (-1: none). Called off every actor, before each attempt.
	Controller func() (int32, error)
	// Endpoint is a broker's inter-broker address (host:port).
	Endpoint func(id int32) (string, bool)
	// Security is the inter-broker listener's client security (TLS,
	// SASL; inter.broker.listener.name). Zero: PLAINTEXT.
	Security clientsec.Client
	// ClientID is the forwarded requests' client.id.
	ClientID string
	// Backoff is the wait between attempts (<= 0: 100 ms).
	Backoff time.Duration
}

// Forwarder sends requests to the active controller over one franz-go
// client per controller address, kept until Close. Safe for concurrent
// use; it starts no goroutine of its own (kgo's clients own theirs and
// Close stops them).
type Forwarder struct {
	cfg     Config
	mu      sync.Mutex
	closed  bool
	clients map[string]*kgo.Client // by address
}

// New returns a Forwarder; Close it.
func New(cfg Config) *Forwarder {
	if cfg.Backoff <= 0 {
		cfg.Backoff = 100 * time.Millisecond
	}
	return &Forwarder{cfg: cfg, clients: map[string]*kgo.Client{}}
}

// Send sends req to the active controller at req's own version (the
// client's: set it first; see pinned) and returns its response, at that
// version. notController tells whether a response is the controller's
// NOT_CONTROLLER (it lost the election after we read /controller): then,
// like after a transport error, /controller is read again and the request
// sent again, after Backoff, until ctx ends. Errors: ErrLocal (this broker
// is the controller now), ErrNoController (none was elected before ctx
// ended), ErrTimeout (the controller did not answer before ctx ended; the
// request may have been carried out), or ctx's error when it was
// cancelled rather than timed out. A response that still says
// NOT_CONTROLLER when ctx ends is returned as it is (retriable for the
// client).
func (f *Forwarder) Send(ctx context.Context, req kmsg.Request, notController func(kmsg.Response) bool) (kmsg.Response, error) {
	var last kmsg.Response
	var lastErr error = ErrNoController
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return f.giveUp(ctx, last, lastErr)
			case <-time.After(f.cfg.Backoff):
			}
		}
		if ctx.Err() != nil {
			return f.giveUp(ctx, last, lastErr)
		}
		id, err := f.cfg.Controller()
		if err != nil || id < 0 {
			lastErr = ErrNoController
			continue
		}
		if id == f.cfg.Self {
			return nil, ErrLocal
		}
		addr, ok := f.cfg.Endpoint(id)
		if !ok {
			lastErr = fmt.Errorf("%w: controller %d has no known endpoint", ErrNoController, id)
			continue
		}
		cl, err := f.client(addr)
		if err != nil {
			return nil, err
		}
		resp, err := cl.SeedBrokers()[0].Request(ctx, pinned{Request: req, max: req.GetVersion()})
		if err != nil {
			lastErr = fmt.Errorf("%w: controller %d at %s: %v", ErrTimeout, id, addr, err)
			continue
		}
		if notController != nil && notController(resp) {
			last = resp
			continue
		}
		return resp, nil
	}
}

// pinned is a request that franz-go sends at the version it carries. kgo
// ignores a version set on a request: it sends the newest version both
// it and the broker serve, min(req.MaxVersion(), the broker's maximum),
// and MaxVersion is all it asks of a request to choose. pinned lowers
// MaxVersion to max (the client's version), so the controller receives
// the request as the client sent it (the fields and the semantics of
// that version: CreateTopics v0 has no validate_only, v1-3 no -1
// defaults, DeleteTopics v0-5 names topics by name only, ...), as Kafka's
// Envelope carries the client's request bytes. Timeout is passed on so
// kgo still reads the answer for timeout_ms plus its overhead.
type pinned struct {
	kmsg.Request
	max int16
}

// MaxVersion is the version to send (never above what kmsg encodes).
func (p pinned) MaxVersion() int16 { return min(p.max, p.Request.MaxVersion()) }

// Timeout is the request's timeout_ms (0 if it has none).
func (p pinned) Timeout() int32 {
	if t, ok := p.Request.(kmsg.TimeoutRequest); ok {
		return t.Timeout()
	}
	return 0
}

// giveUp is Send's answer once ctx ended.
func (f *Forwarder) giveUp(ctx context.Context, last kmsg.Response, lastErr error) (kmsg.Response, error) {
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil, ctx.Err()
	}
	if last != nil {
		return last, nil
	}
	return nil, lastErr
}

func (f *Forwarder) client(addr string) (*kgo.Client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errors.New("forward: closed")
	}
	if cl := f.clients[addr]; cl != nil {
		return cl, nil
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(f.cfg.ClientID)}, f.cfg.Security.SetupOpts(0)...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	f.clients[addr] = cl
	return cl, nil
}

// Close closes every client; later sends fail. Idempotent.
func (f *Forwarder) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for a, cl := range f.clients {
		cl.Close()
		delete(f.clients, a)
	}
}
