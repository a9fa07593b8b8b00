package cluster

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"gregor/replication/zkmeta"
	"gregor/storage/checkpoint"
	"gregor/test/zkharness"
)

// broker.id=-1 with broker.id.generation.enable (Kafka's default): two
// brokers started one after the other on one ZooKeeper register as 1001
// and 1002 (reserved.broker.max.id 1000 + /brokers/seqid's version), write
// the id into meta.properties and keep it across a restart (the seqid
// version moves on only when an id is generated).
func TestBrokerIDGeneration(t *testing.T) {
	c := startClusterEach(t, zkharness.Options{}, 2, nil, nil, func(int32) map[string]string {
		return map[string]string{"broker.id": "-1"}
	})
	check := func(when string) {
		t.Helper()
		c.waitFor("1001 and 1002 registered "+when, 60*time.Second, func() (bool, string) {
			ids := c.registered()
			slices.Sort(ids)
			return slices.Equal(ids, []string{"1001", "1002"}), fmt.Sprint(ids)
		})
		for i, want := range map[int32]int32{1: 1001, 2: 1002} {
			mp, err := checkpoint.ReadMetaProperties(c.brokers[i].DataDir)
			if err != nil || mp.BrokerID != want {
				t.Fatalf("%s: broker %d meta.properties %+v %v; want broker.id=%d", when, i, mp, err, want)
			}
		}
	}
	check("at start")
	for _, i := range []int32{1, 2} {
		c.brokers[i].Stop()
	}
	c.waitFor("both unregistered", 30*time.Second, func() (bool, string) {
		ids := c.registered()
		return len(ids) == 0, fmt.Sprint(ids)
	})
	for _, i := range []int32{2, 1} { // the other order: ids must not follow start order
		c.brokers[i].Start()
	}
	check("after a restart")
	if _, st, err := c.store.Get(zkmeta.BrokerSeqIDPath); err != nil || st != 2 {
		t.Fatalf("%s version %d (%v): a restart generated an id", zkmeta.BrokerSeqIDPath, st, err)
	}
}
