// Package connsetup is the setup timeout of the broker's outgoing
// (inter-broker) connections, as Kafka's ClusterConnectionStates applies
// socket.connection.setup.timeout.ms and socket.connection.setup.timeout.max.ms:
// the first attempt to an address gets the base timeout, each failed
// attempt in a row doubles it (ExponentialBackoff with multiplier 2 and
// ±20% jitter) up to the max, and a setup that completes resets it.
// Setup is the TCP connect and the TLS handshake; SASL too where the
// caller does it inside the same bound (clientsec.Client.DialWith).
package connsetup

import (
	"context"
	"crypto/tls"
	"math"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// jitter is Kafka's CONNECTION_SETUP_TIMEOUT_JITTER; multiplier its
// CONNECTION_SETUP_TIMEOUT_EXP_BASE.
const (
	jitter     = 0.2
	multiplier = 2
)

// Timeouts keeps the failed setups in a row of every address. Safe for
// concurrent use; a nil *Timeouts bounds nothing (Timeout returns the
// caller's bound).
type Timeouts struct {
	base, max time.Duration
	mu        sync.Mutex
	failures  map[string]int // addr → failed attempts since the last completed setup
}

// New makes the timeouts of socket.connection.setup.timeout.ms (base) and
// socket.connection.setup.timeout.max.ms (max); a max below base caps the
// base (Kafka's ExponentialBackoff). Both must be positive.
func New(base, max time.Duration) *Timeouts {
	return &Timeouts{base: min(base, max), max: max, failures: map[string]int{}}
}

// Timeout is the setup timeout of the next attempt to addr: base ×
// 2^failures (the exponent capped where it passes max), ±20%, at most max;
// then at most bound when bound > 0 (the caller's own limit, such as
// replica.socket.timeout.ms bounding Kafka's awaitReady).
func (t *Timeouts) Timeout(addr string, bound time.Duration) time.Duration {
	if t == nil {
		return bound
	}
	t.mu.Lock()
	n := t.failures[addr]
	t.mu.Unlock()
	d := t.backoff(n)
	if bound > 0 && bound < d {
		return bound
	}
	return d
}

// backoff is Kafka's ExponentialBackoff.backoff(attempts).
func (t *Timeouts) backoff(attempts int) time.Duration {
	if t.max <= t.base {
		return t.base
	}
	expMax := math.Log(float64(t.max)/float64(max(t.base, 1))) / math.Log(multiplier)
	term := float64(t.base) * math.Pow(multiplier, min(float64(attempts), expMax))
	term *= 1 - jitter + 2*jitter*rand.Float64()
	return min(time.Duration(term), t.max)
}

// Done records the end of a setup attempt to addr: err nil resets its
// timeout to the base, an error lengthens the next one.
func (t *Timeouts) Done(addr string, err error) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err == nil {
		delete(t.failures, addr)
	} else {
		t.failures[addr]++
	}
}

// Dial connects to addr over TCP with d (its Control, if any, applies),
// then completes TLS with tlsCfg when it is not nil (ServerName defaulting
// to addr's host), the whole attempt bounded by Timeout(addr, bound) and
// recorded by Done. Errors: the dial's or the handshake's;
// context.DeadlineExceeded-wrapping ones when the setup timed out.
func (t *Timeouts) Dial(ctx context.Context, d *net.Dialer, addr string, tlsCfg *tls.Config, bound time.Duration) (net.Conn, error) {
	if to := t.Timeout(addr, bound); to > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, to)
		defer cancel()
	}
	if d == nil {
		d = &net.Dialer{}
	}
	var nc net.Conn
	var err error
	if tlsCfg != nil {
		cfg := tlsCfg.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		nc, err = (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, "tcp", addr)
	} else {
		nc, err = d.DialContext(ctx, "tcp", addr)
	}
	t.Done(addr, err)
	return nc, err
}

// KgoDialer is the kgo.Dialer option dialling every broker with Dial
// (TCP, and TLS with tlsCfg when not nil), bounded by Timeout(addr,
// bound). It replaces kgo.DialTimeout and kgo.DialTLSConfig, which kgo
// refuses together with a dialer. kgo's SASL and ApiVersions come after it
// and are bounded by kgo's request timeouts instead.
func (t *Timeouts) KgoDialer(tlsCfg *tls.Config, bound time.Duration) kgo.Opt {
	return kgo.Dialer(func(ctx context.Context, _, host string) (net.Conn, error) {
		return t.Dial(ctx, nil, host, tlsCfg, bound)
	})
}
