package throttle

import (
	"testing"
	"time"

	"gregor/config"
	"gregor/quota"
)

var t0 = time.UnixMilli(1_700_000_000_000)

func at(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func managers(id int32, rate int64) *Managers {
	q := config.Quotas{Replication: quota.DefaultConfig, AlterLogDirs: quota.DefaultConfig,
		LeaderReplicationThrottledRate: rate, FollowerReplicationThrottledRate: rate, ReplicaAlterLogDirsIOMaxBytesPerSecond: Unlimited}
	return New(id, q)
}

func TestApplyTopicConfigPerBroker(t *testing.T) {
	m := managers(2, 1000)
	err := m.ApplyTopicConfig("t", map[string]string{
		config.LeaderThrottledReplicasKey:   "0:1,0:2,1:2,2:3",
		config.FollowerThrottledReplicasKey: "2:2",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    *Quota
		p    int32
		want bool
	}{{m.Leader, 0, true}, {m.Leader, 1, true}, {m.Leader, 2, false}, {m.Follower, 2, true}, {m.Follower, 0, false}} {
		if got := c.q.IsThrottled("t", c.p); got != c.want {
			t.Errorf("%s IsThrottled(t-%d) = %v, want %v", c.q.Name(), c.p, got, c.want)
		}
	}
	if m.Leader.IsThrottled("other", 0) {
		t.Error("a topic without config is throttled")
	}
	// "*" throttles every partition on every broker.
	if err := m.ApplyTopicConfig("t", map[string]string{config.FollowerThrottledReplicasKey: "*"}); err != nil {
		t.Fatal(err)
	}
	if m.Leader.IsThrottled("t", 0) || !m.Follower.IsThrottled("t", 7) {
		t.Error("after the change: leader throttle must be gone and follower \"*\" must cover t-7")
	}
	// A bad value (hand-edited znode) keeps that side as it was.
	if err := m.ApplyTopicConfig("t", map[string]string{config.FollowerThrottledReplicasKey: "x"}); err == nil {
		t.Fatal("bad value applied without error")
	}
	if !m.Follower.IsThrottled("t", 7) {
		t.Error("bad value dropped the previous follower throttle")
	}
	// Removing the configs removes the throttles.
	if err := m.ApplyTopicConfig("t", map[string]string{}); err != nil || m.Follower.IsThrottled("t", 7) {
		t.Errorf("throttle still there after removal (err %v)", err)
	}
}

func TestLeaderDecision(t *testing.T) {
	m := managers(1, 1_000_000)
	m.ApplyTopicConfig("t", map[string]string{config.LeaderThrottledReplicasKey: "0:1"})
	q := m.Leader
	if ShouldLeaderThrottle(q, "t", 0, false, at(0)) {
		t.Fatal("throttled before any byte moved")
	}
	q.Record(1_000_000, at(0)) // exactly the bound over the 1 s minimum window: not above it
	if ShouldLeaderThrottle(q, "t", 0, false, at(0)) {
		t.Fatal("throttled at the bound")
	}
	q.Record(500_000, at(100))
	if !ShouldLeaderThrottle(q, "t", 0, false, at(100)) {
		t.Fatal("out-of-sync follower of a throttled partition not throttled over the quota")
	}
	if ShouldLeaderThrottle(q, "t", 0, true, at(100)) {
		t.Fatal("in-sync follower throttled")
	}
	if ShouldLeaderThrottle(q, "t", 1, false, at(100)) {
		t.Fatal("partition not listed for this broker throttled")
	}
	// 1.5e6 over 1.5 s is the bound again: free.
	if ShouldLeaderThrottle(q, "t", 0, false, at(1500)) {
		t.Fatal("still throttled once the rate is back at the bound")
	}
	// A new rate applies at once.
	q.SetRate(100_000)
	if !ShouldLeaderThrottle(q, "t", 0, false, at(1500)) {
		t.Fatal("lower rate not applied")
	}
	q.SetRate(Unlimited)
	if ShouldLeaderThrottle(q, "t", 0, false, at(1500)) {
		t.Fatal("unlimited rate still throttles")
	}
}

func TestFollowerDecisionAndWait(t *testing.T) {
	m := managers(3, 1_000_000)
	m.ApplyTopicConfig("t", map[string]string{config.FollowerThrottledReplicasKey: "0:3"})
	q := m.Follower
	q.Record(3_000_000, at(0))
	if !ShouldFollowerThrottle(q, "t", 0, false, at(0)) || ShouldFollowerThrottle(q, "t", 0, true, at(0)) {
		t.Fatal("follower decision wrong")
	}
	// 3e6 over the 1 s window at 1e6/s: (3e6-1e6)/1e6 × 1 s = 2 s.
	if d := q.ThrottleTime(at(0)); d != 2*time.Second {
		t.Fatalf("ThrottleTime = %v, want 2s", d)
	}
	if d := q.ThrottleTime(at(3000)); d != 0 || ShouldFollowerThrottle(q, "t", 0, false, at(3000)) {
		t.Fatalf("still throttled after 3 s (wait %v)", d)
	}
	if q.RecordedBytes() != 3_000_000 {
		t.Fatalf("recorded %d", q.RecordedBytes())
	}
}

func TestPacedRateMeetsBound(t *testing.T) {
	// A leader answering 64 KiB fetches whenever not over quota moves,
	// over 20 s, the bound ± a fetch.
	m := managers(1, 1_000_000)
	m.ApplyTopicConfig("t", map[string]string{config.LeaderThrottledReplicasKey: "*"})
	q := m.Leader
	var moved int64
	for ms := int64(0); ms < 20_000; ms += 5 {
		if !ShouldLeaderThrottle(q, "t", 0, false, at(ms)) {
			q.Record(64<<10, at(ms))
			moved += 64 << 10
		}
	}
	if rate := float64(moved) / 20; rate < 0.95e6 || rate > 1.1e6 {
		t.Fatalf("paced rate %.0f B/s, want about 1e6", rate)
	}
}

func TestNilQuota(t *testing.T) {
	var q *Quota
	q.Record(10, at(0))
	q.SetRate(5)
	if q.IsThrottled("t", 0) || q.IsQuotaExceeded(at(0)) || q.Rate() != Unlimited {
		t.Fatal("nil quota throttles")
	}
}
