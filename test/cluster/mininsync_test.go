package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestMinInsyncReplicas: RF 3 with min.insync.replicas=2. With two
// replicas killed the ISR is the leader alone: acks=all produce is
// refused with NOT_ENOUGH_REPLICAS and nothing is appended, acks=1 still
// appends; once one replica is back in the ISR acks=all succeeds again.
// The leader's admin /metrics count the ISR shrink and expansion and show
// the partition under min ISR while it is.
//
// The ZooKeeper session timeout is 8 s here, against a
// replica.lag.time.max.ms of 3 s (checked every 1.5 s), so the leader drops
// the killed followers itself (counted in isr_shrinks_total, as Kafka's
// IsrShrinksPerSec) well before their sessions expire and the controller
// would (a controller-made shrink reaches the leader by LeaderAndIsr and is
// not the leader's shrink).
func TestMinInsyncReplicas(t *testing.T) {
	c := startCluster(t, 3, map[string]string{"min.insync.replicas": "2", "zookeeper.session.timeout.ms": "8000"}, nil)
	const topic = "mininsync"
	c.createTopic(topic, 1, 3, nil)
	leader := c.waitServing(topic, 0, 20*time.Second)
	lb := c.brokers[leader]
	c.waitMetric(leader, mUnderMinIsr, 10*time.Second, "0 with a full ISR", func(v float64) bool { return v == 0 })
	shrinks := c.mustMetric(leader, mIsrShrinks)
	if code, base := rawProduce(t, lb.Addr(), topic, 0, -1, 10*time.Second, "a0", "a1", "a2"); code != 0 || base != 0 {
		t.Fatalf("acks=all with a full ISR: %s at base offset %d, want NONE at 0", codeName(code), base)
	}

	var victims []int32
	for id := range c.brokers {
		if id != leader {
			victims = append(victims, id)
		}
	}
	for _, id := range victims {
		c.brokers[id].Kill()
	}
	t.Logf("leader %d; killed %v", leader, victims)
	c.waitFor("ISR = [leader] in ZooKeeper", sessionTimeout+20*time.Second, func() (bool, string) {
		s, _ := c.partitionState(topic, 0)
		return s.Leader == leader && len(s.ISR) == 1 && s.ISR[0] == leader, fmt.Sprintf("%+v", s)
	})
	if reg := c.registered(); len(reg) != 3 {
		t.Logf("registered %v when the ISR shrank: the controller may have shrunk it, not the leader", reg)
	}
	c.waitMetric(leader, mIsrShrinks, 10*time.Second, fmt.Sprintf("above %v (the leader shrank the ISR)", shrinks), func(v float64) bool { return v > shrinks })
	c.waitMetric(leader, mUnderMinIsr, 10*time.Second, "1 with ISR [leader] and min.insync.replicas=2", func(v float64) bool { return v == 1 })
	expands := c.mustMetric(leader, mIsrExpands)
	// The leader learns the shrunken ISR by LeaderAndIsr, not through the
	// znode; until then an acks=all produce waits for the dead followers
	// and times out. Poll (with short produce timeouts) for the refusal.
	var lastCode int16
	c.waitFor("acks=all refused with NOT_ENOUGH_REPLICAS", 20*time.Second, func() (bool, string) {
		lastCode, _ = rawProduce(t, lb.Addr(), topic, 0, -1, time.Second, "probe")
		return lastCode == kerr.NotEnoughReplicas.Code, codeName(lastCode)
	})
	end, code := endOffset(t, lb.Addr(), topic, 0)
	if code != 0 {
		t.Fatalf("end offset: %s", codeName(code))
	}
	for i := 0; i < 3; i++ {
		if code, _ := rawProduce(t, lb.Addr(), topic, 0, -1, 5*time.Second, fmt.Sprintf("refused-%d", i)); code != kerr.NotEnoughReplicas.Code {
			t.Fatalf("acks=all with ISR [%d] answered %s, want NOT_ENOUGH_REPLICAS", leader, codeName(code))
		}
	}
	if e, _ := endOffset(t, lb.Addr(), topic, 0); e != end {
		t.Fatalf("refused acks=all produces moved the end offset %d → %d (Kafka checks the ISR before appending)", end, e)
	}
	code, base := rawProduce(t, lb.Addr(), topic, 0, 1, 5*time.Second, "one-0", "one-1")
	if code != 0 || base != end {
		t.Fatalf("acks=1 with ISR [%d]: %s at %d, want NONE at %d", leader, codeName(code), base, end)
	}
	if e, _ := endOffset(t, lb.Addr(), topic, 0); e != end+2 {
		t.Fatalf("end offset after acks=1: %d, want %d (a lone leader's high watermark is its log end)", e, end+2)
	}

	back := victims[0]
	c.waitUnregistered(back)
	c.brokers[back].Start()
	c.waitFor(fmt.Sprintf("broker %d back in the ISR", back), 30*time.Second, func() (bool, string) {
		s, _ := c.partitionState(topic, 0)
		return s.Leader == leader && len(s.ISR) == 2 && contains(s.ISR, back), fmt.Sprintf("%+v", s)
	})
	c.waitMetric(leader, mIsrExpands, 10*time.Second, fmt.Sprintf("above %v (the leader expanded the ISR)", expands), func(v float64) bool { return v > expands })
	c.waitMetric(leader, mUnderMinIsr, 10*time.Second, "0 with an ISR of 2", func(v float64) bool { return v == 0 })
	code, base = rawProduce(t, lb.Addr(), topic, 0, -1, 10*time.Second, "again-0", "again-1")
	if code != 0 || base != end+2 {
		t.Fatalf("acks=all with ISR of 2: %s at %d, want NONE at %d", codeName(code), base, end+2)
	}
	got := readPartition(t, []string{lb.Addr()}, topic, 0, end+4)
	want := map[int64]string{0: "a0", 1: "a1", 2: "a2", end: "one-0", end + 1: "one-1", end + 2: "again-0", end + 3: "again-1"}
	for o, v := range want {
		if got[o] != v {
			t.Errorf("offset %d holds %q, want %q", o, got[o], v)
		}
	}
	for o, v := range got {
		if len(v) >= 7 && v[:7] == "refused" {
			t.Errorf("offset %d holds %q: a refused acks=all record was appended", o, v)
		}
	}
}
