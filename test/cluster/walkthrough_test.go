package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/replication/zkmeta"
)

// produce sends n records with acks=all to topic (values prefix-i) and
// fails the test on any error.
func produce(t *testing.T, cl *kgo.Client, topic, prefix string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for i := 0; i < n; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf("%s-%d", prefix, i))})
	}
	res := cl.ProduceSync(ctx, rs...)
	if err := res.FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", prefix, err)
	}
	last := map[int32]int64{}
	for _, r := range res {
		if r.Record.Offset+1 > last[r.Record.Partition] {
			last[r.Record.Partition] = r.Record.Offset + 1
		}
	}
	t.Logf("produced %s: end offsets by partition %v", prefix, last)
}

// consumeAll reads n records of topic from the start, failing after 60 s.
func consumeAll(t *testing.T, c *cluster, topic string, n int) map[string]bool {
	t.Helper()
	cl := c.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := map[string]bool{}
	errs := map[int32]error{}
	perPart := map[int32]int{}
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			ectx, ecancel := context.WithTimeout(context.Background(), 5*time.Second)
			ends, _ := c.admin().ListEndOffsets(ectx, topic)
			ecancel()
			var desc []string
			ends.Each(func(o kadm.ListedOffset) {
				desc = append(desc, fmt.Sprintf("p%d end %d (%v)", o.Partition, o.Offset, o.Err))
			})
			t.Fatalf("consumed %d of %d records (per partition %v; last errors: %v; end offsets %v)", len(seen), n, perPart, errs, desc)
		}
		fs.EachError(func(topic string, p int32, err error) { errs[p] = err })
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true; perPart[r.Partition]++ })
	}
	return seen
}

// TestSeedWalkthrough is the seeds' cluster walkthrough: three brokers, a
// topic with replication factor 3 whose Leader/Replicas/Isr every broker
// describes; kill -9 one broker, the ISRs shrink and leadership moves
// while producing and consuming keep working; restart it and it catches
// up and rejoins every ISR.
func TestSeedWalkthrough(t *testing.T) {
	c := startCluster(t, 3, nil, nil)

	// ZooKeeper layout as Kafka 2.x writes it.
	ctrl := c.controllerID()
	if ctrl < 1 || ctrl > 3 {
		t.Fatalf("/controller names broker %d", ctrl)
	}
	data, _, err := c.store.Get(zkmeta.BrokerPath(2))
	if err != nil {
		t.Fatalf("get /brokers/ids/2: %v", err)
	}
	var reg map[string]any
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatalf("/brokers/ids/2 is not JSON: %s", data)
	}
	for _, k := range []string{"endpoints", "host", "port", "jmx_port", "timestamp", "version"} {
		if _, ok := reg[k]; !ok {
			t.Errorf("/brokers/ids/2 lacks %q: %s", k, data)
		}
	}
	if reg["port"] != float64(c.brokers[2].Port) {
		t.Errorf("/brokers/ids/2 port %v, want %d", reg["port"], c.brokers[2].Port)
	}
	if _, _, err := c.store.Get(zkmeta.ClusterIDPath); err != nil {
		t.Errorf("/cluster/id: %v", err)
	}
	if data, _, err := c.store.Get(zkmeta.ControllerEpochPath); err != nil || string(data) == "" {
		t.Errorf("/controller_epoch: %q %v", data, err)
	}

	const topic = "walk"
	c.createTopic(topic, 3, 3, nil)
	data, _, err = c.store.Get(zkmeta.TopicPath(topic))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zkmeta.DecodeTopicAssignment(topic, data)
	if err != nil || len(a.Partitions) != 3 {
		t.Fatalf("/brokers/topics/%s = %s (%v)", topic, data, err)
	}
	leaders := map[int32]bool{}
	for p, rs := range a.Partitions {
		if len(rs) != 3 {
			t.Fatalf("partition %d replicas %v", p, rs)
		}
		leaders[rs[0]] = true
	}
	if len(leaders) != 3 {
		t.Errorf("preferred leaders %v are not spread over the 3 brokers", leaders)
	}
	// Every broker's metadata cache agrees with ZooKeeper.
	for id, b := range c.brokers {
		c.waitFor(fmt.Sprintf("broker %d describing %s", id, topic), 20*time.Second, func() (bool, string) {
			d, err := describe(t, b, topic)
			if err != nil {
				return false, err.Error()
			}
			for p, pd := range d.Partitions {
				s, _ := c.partitionState(topic, p)
				if pd.Leader != s.Leader || len(pd.ISR) != 3 || len(pd.Replicas) != 3 {
					return false, fmt.Sprintf("p%d leader %d isr %v replicas %v (zk %+v)", p, pd.Leader, pd.ISR, pd.Replicas, s)
				}
			}
			return true, ""
		})
	}

	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(20))
	produce(t, prod, topic, "before", 300)
	if got := consumeAll(t, c, topic, 300); len(got) != 300 {
		t.Fatalf("consumed %d", len(got))
	}

	// kill -9 the leader of partition 0.
	s0, _ := c.partitionState(topic, 0)
	victim := s0.Leader
	c.brokers[victim].Kill()
	t.Logf("killed broker %d (leader of %s-0)", victim, topic)
	c.waitFor("leadership to move and ISRs to shrink", 30*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, ok := c.partitionState(topic, p)
			if !ok || s.Leader < 0 || s.Leader == victim || contains(s.ISR, victim) {
				return false, fmt.Sprintf("p%d %+v", p, s)
			}
		}
		return true, ""
	})
	var other int32
	for id := range c.brokers {
		if id != victim {
			other = id
		}
	}
	c.waitFor("metadata of a live broker to show the new leaders", 20*time.Second, func() (bool, string) {
		d, err := describe(t, c.brokers[other], topic)
		if err != nil {
			return false, err.Error()
		}
		for p, pd := range d.Partitions {
			if pd.Leader == victim || pd.Leader < 0 || contains(pd.ISR, victim) || len(pd.ISR) != 2 {
				return false, fmt.Sprintf("p%d leader %d isr %v", p, pd.Leader, pd.ISR)
			}
		}
		return true, ""
	})
	prod2 := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(20))
	produce(t, prod2, topic, "during", 300)
	if got := consumeAll(t, c, topic, 600); !got["during-299"] || !got["before-0"] {
		t.Fatalf("records missing after the kill")
	}

	// Restart: it catches up and rejoins every ISR.
	c.brokers[victim].Start()
	c.waitFor("the restarted broker back in every ISR", 60*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, ok := c.partitionState(topic, p)
			if !ok || len(s.ISR) != 3 {
				return false, fmt.Sprintf("p%d %+v", p, s)
			}
		}
		return true, ""
	})
	produce(t, prod2, topic, "after", 100)
	if got := consumeAll(t, c, topic, 700); !got["after-99"] {
		t.Fatalf("records missing after the restart")
	}
}
