package clientsec

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"gregor/wire/connsetup"
	"gregor/wire/connsetup/connsetuptest"
	"gregor/wire/security"
)

// The raw dial (the follower fetcher's connection) with Setup: a SASL
// handshake that a listener accepting TCP never answers fails at the setup
// timeout, not clientsec's 10 s handshake bound nor the caller's 30 s, and
// the next attempt gets about twice as long.
func TestDialWithSetupTimeout(t *testing.T) {
	addr := connsetuptest.SilentListener(t)
	mech, err := Mechanism("PLAIN", "u", "p")
	if err != nil {
		t.Fatal(err)
	}
	c := Client{Protocol: security.SASLPlaintext, SASL: mech, Setup: connsetup.New(300*time.Millisecond, 5*time.Second)}
	for _, want := range [][2]time.Duration{{240 * time.Millisecond, 3 * time.Second}, {480 * time.Millisecond, 4 * time.Second}} {
		began := time.Now()
		nc, err := c.DialWith(context.Background(), &net.Dialer{Timeout: 30 * time.Second}, addr, "test")
		took := time.Since(began)
		if err == nil {
			nc.Close()
			t.Fatal("SASL setup to a silent listener succeeded")
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("error %v, want a timeout", err)
		}
		if took < want[0] || took > want[1] {
			t.Fatalf("setup failed after %v, want in [%v, %v]", took, want[0], want[1])
		}
	}
}
