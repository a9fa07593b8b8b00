package fetcher

import (
	"testing"
	"time"

	"gregor/quota"
	"gregor/replication/throttle"
)

// TestThrottleWaitBounds: a fetcher whose every partition is throttled
// waits until the follower quota frees, never less than minThrottleWait
// (no spinning) nor more than replica.fetch.backoff.ms.
func TestThrottleWaitBounds(t *testing.T) {
	q := throttle.NewQuota("FollowerReplication", quota.DefaultConfig, 1_000_000)
	f := &fetcherActor{cfg: Config{Quota: q, Backoff: time.Second}}
	now := time.Now()
	if d := f.throttleWait(now); d != minThrottleWait {
		t.Fatalf("wait under quota = %v, want the floor %v", d, minThrottleWait)
	}
	q.Record(1_300_000, now) // 1.3e6 over the 1 s minimum window: 300 ms to go
	if d := f.throttleWait(now); d != 300*time.Millisecond {
		t.Fatalf("wait = %v, want 300ms", d)
	}
	q.Record(10_000_000, now)
	if d := f.throttleWait(now); d != time.Second {
		t.Fatalf("wait = %v, want the backoff cap 1s", d)
	}
}
