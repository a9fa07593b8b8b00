package quota

import (
	"testing"
	"time"
)

var t0 = time.UnixMilli(1_700_000_000_000)

func at(msec int64) time.Time { return t0.Add(time.Duration(msec) * time.Millisecond) }

func TestRateMinimumWindow(t *testing.T) {
	r := NewRate(DefaultConfig)
	r.Record(1_000_000, at(0))
	// One burst right after start is spread over Samples-1 = 10 full windows.
	if got := r.Measure(at(0)); got != 100_000 {
		t.Fatalf("rate after one record = %v, want 100000/s (1e6 over 10 s)", got)
	}
	if got := r.ThrottleTime(200_000, at(0)); got != 0 {
		t.Fatalf("throttle under quota = %v, want 0", got)
	}
	// 3e6 over 10 s = 3e5/s against 1e5/s: (3e5-1e5)/1e5 * 10 s = 20 s.
	r.Record(2_000_000, at(0))
	if got := r.ThrottleTime(100_000, at(0)); got != 20*time.Second {
		t.Fatalf("throttle = %v, want 20s", got)
	}
}

func TestRateSteadyState(t *testing.T) {
	r := NewRate(DefaultConfig)
	// 100 units every 100 ms for 20 s: 1000/s.
	for i := int64(0); i <= 200; i++ {
		r.Record(100, at(i*100))
	}
	got := r.Measure(at(20_000))
	if got < 950 || got > 1100 {
		t.Fatalf("steady rate = %v, want about 1000/s", got)
	}
	if r.Exceeds(1200, at(20_000)) || !r.Exceeds(800, at(20_000)) {
		t.Fatalf("Exceeds wrong around %v", got)
	}
	// Silence longer than Samples*Window resets every sample.
	if got := r.Measure(at(40_000)); got != 0 {
		t.Fatalf("rate after 20 s of silence = %v, want 0", got)
	}
}

func TestRateThrottleBringsRateToBound(t *testing.T) {
	// A client that always waits the throttle time it is given ends near
	// the bound: the property Kafka's formula is chosen for.
	r := NewRate(DefaultConfig)
	const bound = 1_000_000.0
	now := int64(0)
	var sent float64
	for now < 60_000 {
		d := r.RecordAndThrottle(100_000, bound, at(now))
		sent += 100_000
		now += 10 + d.Milliseconds()
	}
	avg := sent / 60
	if avg < 0.9*bound || avg > 1.15*bound {
		t.Fatalf("average rate under throttling = %.0f/s, want within [0.9, 1.15] of %.0f", avg, bound)
	}
}

func TestRateNoBound(t *testing.T) {
	r := NewRate(DefaultConfig)
	r.Record(1e12, at(0))
	if d := r.ThrottleTime(0, at(0)); d != 0 {
		t.Fatalf("bound 0 throttles %v, want never", d)
	}
}

func TestTokenBucket(t *testing.T) {
	cfg := Config{Samples: 11, Window: time.Second}
	b := NewTokenBucket(cfg)
	const q = 10.0 // mutations/s; burst 110
	if got := b.Tokens(q, at(0)); got != 110 {
		t.Fatalf("initial tokens = %v, want the burst 110", got)
	}
	b.Record(130, q, at(0))
	if got := b.ThrottleTime(q, at(0)); got != 2*time.Second {
		t.Fatalf("throttle at -20 tokens = %v, want 2s", got)
	}
	if got := b.ThrottleTime(q, at(1000)); got != time.Second {
		t.Fatalf("throttle after 1 s refill = %v, want 1s", got)
	}
	if got := b.Tokens(q, at(100_000)); got != 110 {
		t.Fatalf("tokens capped at burst: %v, want 110", got)
	}
}

func TestSimpleRateWindow(t *testing.T) {
	r := NewSimpleRate(DefaultConfig)
	r.Record(1_000_000, at(0))
	// At least one window: 1e6 over 1 s, not over 10 s as Rate.
	if got := r.Measure(at(0)); got != 1_000_000 {
		t.Fatalf("simple rate after one record = %v, want 1e6/s", got)
	}
	r.Record(1_000_000, at(4000))
	if got := r.Measure(at(4000)); got != 500_000 {
		t.Fatalf("simple rate = %v, want 2e6 over 4 s", got)
	}
	// 2e6 over 4 s against 4e5/s: (5e5-4e5)/4e5 * 4 s = 1 s.
	if got := r.ThrottleTime(400_000, at(4000)); got != time.Second {
		t.Fatalf("throttle = %v, want 1s", got)
	}
}
