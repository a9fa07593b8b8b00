// Package clientsec is the client end of a security protocol: how a Kafka
// client connection — the broker's own inter-broker connections (controller
// channel, follower fetchers, transaction markers), the tools and the tests
// — does TLS and SASL. It produces kgo options for franz-go clients and a
// Dial for the few raw connections Gregor keeps (the follower fetcher's
// own connection), both from one Client value.
package clientsec

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"gregor/wire/connsetup"
	"gregor/wire/security"
)

// Client is one client's security: security.protocol, the TLS
// configuration for SSL/SASL_SSL and the SASL mechanism for
// SASL_PLAINTEXT/SASL_SSL. The zero value is PLAINTEXT.
type Client struct {
	Protocol security.Protocol
	TLS      *tls.Config    // required for SSL and SASL_SSL
	SASL     sasl.Mechanism // required for SASL_PLAINTEXT and SASL_SSL
	// Setup, when set (the broker's inter-broker connections), bounds each
	// connection setup as Kafka's socket.connection.setup.timeout.ms/.max.ms
	// (connsetup.Timeouts, shared by every copy of the Client); nil: only
	// the callers' own bounds.
	Setup *connsetup.Timeouts
}

// Mechanism returns the franz-go SASL mechanism for a Kafka mechanism name
// (sasl.mechanism): PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512. Errors: any
// other name (GSSAPI and OAUTHBEARER are not built).
func Mechanism(name, username, password string) (sasl.Mechanism, error) {
	switch name {
	case "PLAIN":
		return plain.Auth{User: username, Pass: password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: username, Pass: password}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: username, Pass: password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("SASL mechanism %q is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)", name)
}

// Validate reports a Client whose fields do not fit its protocol.
func (c Client) Validate() error {
	p := c.Protocol
	if p == "" {
		p = security.Plaintext
	}
	if p.UsesTLS() && c.TLS == nil {
		return fmt.Errorf("security.protocol=%s needs TLS settings", p)
	}
	if p.UsesSASL() && c.SASL == nil {
		return fmt.Errorf("security.protocol=%s needs sasl.mechanism and sasl.jaas.config", p)
	}
	return nil
}

// Opts returns the kgo options that make a franz-go client use this
// security (none for PLAINTEXT).
func (c Client) Opts() []kgo.Opt {
	var opts []kgo.Opt
	if c.Protocol.UsesTLS() && c.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(c.TLS))
	}
	if c.Protocol.UsesSASL() && c.SASL != nil {
		opts = append(opts, kgo.SASL(c.SASL))
	}
	return opts
}

// SetupOpts are Opts for an inter-broker client whose connection setup is
// bounded by bound when positive (the caller's own limit, e.g.
// controller.socket.timeout.ms as Kafka's awaitReady) and, with c.Setup,
// by its exponential setup timeout per broker: then kgo dials TCP and TLS
// through c.Setup (kgo's SASL and ApiVersions follow, under kgo's request
// timeouts). Without c.Setup: kgo.DialTimeout(bound), or kgo's 10 s
// default for a bound of 0.
func (c Client) SetupOpts(bound time.Duration) []kgo.Opt {
	if c.Setup == nil {
		if bound <= 0 {
			return c.Opts()
		}
		return append(c.Opts(), kgo.DialTimeout(bound))
	}
	var tlsCfg *tls.Config
	if c.Protocol.UsesTLS() {
		tlsCfg = c.TLS
	}
	opts := []kgo.Opt{c.Setup.KgoDialer(tlsCfg, bound)}
	if c.Protocol.UsesSASL() && c.SASL != nil {
		opts = append(opts, kgo.SASL(c.SASL))
	}
	return opts
}

// handshakeTimeout bounds a raw connection's TLS and SASL handshakes.
const handshakeTimeout = 10 * time.Second

// Dial opens a raw connection to addr ("host:port") and completes the TLS
// handshake and SASL authentication (SaslHandshake v1, then
// SaslAuthenticate v1 rounds) before returning it, so the caller speaks
// Kafka requests on it as on a plaintext one. clientID is the request
// header's client id of the SASL requests. Errors: dial, TLS and SASL
// failures, the broker's error message included.
func (c Client) Dial(ctx context.Context, addr, clientID string, timeout time.Duration) (net.Conn, error) {
	return c.DialWith(ctx, &net.Dialer{Timeout: timeout}, addr, clientID)
}

// DialWith is Dial with the caller's dialer (its Timeout bounds the TCP
// connect, its Control can set socket options before it, such as the
// follower's replica.socket.receive.buffer.bytes). ctx's deadline, when
// sooner than the handshake bound, also bounds TLS and SASL. With c.Setup
// the whole setup (TCP, TLS, SASL) is also bounded by its timeout for addr
// (d.Timeout the caller's bound), and its end recorded there.
func (c Client) DialWith(ctx context.Context, d *net.Dialer, addr, clientID string) (conn net.Conn, err error) {
	if c.Setup != nil {
		to := c.Setup.Timeout(addr, d.Timeout)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, to)
		defer cancel()
		dd := *d
		dd.Timeout = to
		d = &dd
		defer func() { c.Setup.Done(addr, err) }()
	}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			nc.Close()
		}
	}()
	deadline := time.Now().Add(handshakeTimeout)
	if dl, has := ctx.Deadline(); has && dl.Before(deadline) {
		deadline = dl
	}
	if err := nc.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if c.Protocol.UsesTLS() {
		cfg := c.TLS.Clone()
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr)
			cfg.ServerName = host
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		nc = tc
	}
	if c.Protocol.UsesSASL() {
		if err := authenticate(ctx, nc, addr, clientID, c.SASL); err != nil {
			return nil, fmt.Errorf("SASL authentication with %s: %w", addr, err)
		}
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	ok = true
	return nc, nil
}

// authenticate runs SaslHandshake v1 and SaslAuthenticate v1 rounds on nc.
func authenticate(ctx context.Context, nc net.Conn, addr, clientID string, m sasl.Mechanism) error {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))
	var corr int32
	roundTrip := func(req kmsg.Request, resp kmsg.Response) error {
		corr++
		if _, err := nc.Write(f.AppendRequest(nil, req, corr)); err != nil {
			return err
		}
		body, err := readResponse(nc, corr, req.IsFlexible())
		if err != nil {
			return err
		}
		resp.SetVersion(req.GetVersion())
		return resp.ReadFrom(body)
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, m.Name()
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	if err := roundTrip(hs, hsResp); err != nil {
		return err
	}
	if hsResp.ErrorCode != 0 {
		return fmt.Errorf("mechanism %s refused (error %d), broker enables %v", m.Name(), hsResp.ErrorCode, hsResp.SupportedMechanisms)
	}
	host, _, _ := net.SplitHostPort(addr)
	sess, token, err := m.Authenticate(ctx, host)
	if err != nil {
		return err
	}
	for round := 0; round < 10; round++ {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 1, token
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		if err := roundTrip(req, resp); err != nil {
			return err
		}
		if resp.ErrorCode != 0 {
			msg := ""
			if resp.ErrorMessage != nil {
				msg = *resp.ErrorMessage
			}
			return fmt.Errorf("error %d: %s", resp.ErrorCode, msg)
		}
		done, next, err := sess.Challenge(resp.SASLAuthBytes)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		token = next
	}
	return errors.New("SASL exchange did not finish in 10 rounds")
}

// readResponse reads one response frame and returns its body after the
// response header (correlation id, and the tagged fields of header v1).
func readResponse(nc net.Conn, corr int32, flexible bool) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > 1<<20 {
		return nil, fmt.Errorf("SASL response of %d bytes", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(nc, buf); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(buf)); got != corr {
		return nil, fmt.Errorf("response for correlation id %d, want %d", got, corr)
	}
	body := buf[4:]
	if flexible { // header v1: tagged fields (none expected: one zero byte)
		if len(body) == 0 || body[0] != 0 {
			return nil, errors.New("unexpected tagged fields in the response header")
		}
		body = body[1:]
	}
	return body, nil
}
