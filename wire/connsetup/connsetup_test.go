package connsetup

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire/connsetup/connsetuptest"
)

// Kafka's ExponentialBackoff(base, 2, max, 0.2) per address: base ±20%,
// doubling per failure, capped at max; a completed setup resets it.
func TestTimeoutsBackoff(t *testing.T) {
	ts := New(100*time.Millisecond, time.Second)
	in := func(d, lo, hi time.Duration) {
		t.Helper()
		if d < lo || d > hi {
			t.Fatalf("timeout %v, want in [%v, %v]", d, lo, hi)
		}
	}
	for range 20 {
		in(ts.Timeout("a:1", 0), 80*time.Millisecond, 120*time.Millisecond)
	}
	ts.Done("a:1", errors.New("refused"))
	in(ts.Timeout("a:1", 0), 160*time.Millisecond, 240*time.Millisecond)
	in(ts.Timeout("b:1", 0), 80*time.Millisecond, 120*time.Millisecond) // per address
	ts.Done("a:1", errors.New("refused"))
	in(ts.Timeout("a:1", 0), 320*time.Millisecond, 480*time.Millisecond)
	for range 10 {
		ts.Done("a:1", errors.New("refused"))
	}
	for range 20 {
		in(ts.Timeout("a:1", 0), 800*time.Millisecond, time.Second)
	}
	in(ts.Timeout("a:1", 50*time.Millisecond), 50*time.Millisecond, 50*time.Millisecond) // the caller's bound
	ts.Done("a:1", nil)
	in(ts.Timeout("a:1", 0), 80*time.Millisecond, 120*time.Millisecond)
	// max below base: max, no jitter (Kafka's min(maxInterval, initialInterval)).
	low := New(time.Second, 200*time.Millisecond)
	low.Done("a:1", errors.New("x"))
	in(low.Timeout("a:1", 0), 200*time.Millisecond, 200*time.Millisecond)
	var none *Timeouts
	in(none.Timeout("a:1", 7*time.Second), 7*time.Second, 7*time.Second)
}

// A TLS setup to a listener that accepts TCP but never answers times out at
// the setup timeout, then at about twice it (the next attempt's).
func TestDialTLSSetupTimesOut(t *testing.T) {
	addr := connsetuptest.SilentListener(t)
	ts := New(300*time.Millisecond, 5*time.Second)
	cfg := &tls.Config{InsecureSkipVerify: true}
	attempt := func(lo, hi time.Duration) {
		t.Helper()
		began := time.Now()
		c, err := ts.Dial(context.Background(), nil, addr, cfg, 0)
		took := time.Since(began)
		if err == nil {
			c.Close()
			t.Fatal("TLS setup to a silent listener succeeded")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v, want a deadline", err)
		}
		if took < lo || took > hi {
			t.Fatalf("setup failed after %v, want in [%v, %v]", took, lo, hi)
		}
	}
	attempt(240*time.Millisecond, 3*time.Second)
	attempt(480*time.Millisecond, 4*time.Second)
}

// A kgo client dialling through KgoDialer: its request to a silent TLS
// listener fails, each dial bounded by the setup timeout (well before
// kgo's 10 s dial default), and the failures are counted.
func TestKgoDialerSetupTimeout(t *testing.T) {
	addr := connsetuptest.SilentListener(t)
	ts := New(200*time.Millisecond, 400*time.Millisecond)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), ts.KgoDialer(&tls.Config{InsecureSkipVerify: true}, 0),
		kgo.RequestRetries(1), kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	began := time.Now()
	_, err = kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("request: %v (ctx %v), want a setup failure before the 8 s deadline", err, ctx.Err())
	}
	ts.mu.Lock()
	fails := ts.failures[addr]
	ts.mu.Unlock()
	if fails < 1 {
		t.Fatalf("no failed setup recorded (took %v)", time.Since(began))
	}
	t.Logf("failed after %v, %d failed setups", time.Since(began), fails)
}
