package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
	"gregor/test/zkharness"
)

// consumerBytesOut is broker id's kafka_server_brokertopicmetrics_bytes_out_total
// (record bytes sent to consumers; 0 before the first sample exists).
func (c *cluster) consumerBytesOut(id int32) float64 {
	c.t.Helper()
	v, _, err := harness.MetricSum(metricsHTTP, c.admins[id], "kafka_server_brokertopicmetrics_bytes_out_total")
	if err != nil {
		c.t.Fatalf("broker %d metrics: %v", id, err)
	}
	return v
}

// consumeEvery reads n records of topic from the start with cl (no group)
// and returns the values seen, failing on a duplicate, a record in
// another partition than its value says (v<i> in partition i%3), or after 60 s.
func consumeEvery(t *testing.T, cl *kgo.Client, n int) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := map[string]bool{}
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records in 60 s", len(seen), n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if seen[string(r.Value)] {
				t.Fatalf("record %q read twice", r.Value)
			}
			seen[string(r.Value)] = true
			if i, err := strconv.Atoi(string(r.Value[1:])); err != nil || int32(i%3) != r.Partition {
				t.Fatalf("record %q in partition %d", r.Value, r.Partition)
			}
		})
	}
	return seen
}

// TestClusterFollowerFetching (KIP-392): three brokers in racks r1, r2,
// r3 with replica.selector.class RackAwareReplicaSelector, a topic of 3
// partitions with RF 3. A franz-go consumer with client.rack r2
// (kgo.Rack) reads every record, and every record byte sent to consumers
// came from broker 2: the leaders of the other partitions answered its
// fetches with PreferredReadReplica 2 and no records, and broker 2's
// follower replicas served it up to their high watermarks. A consumer
// without a rack reads each partition from its leader; kcat with
// client.rack=r2 (librdkafka's follower fetching) is served by broker 2.
func TestClusterFollowerFetching(t *testing.T) {
	c := startClusterEach(t, zkharness.Options{}, 3,
		map[string]string{"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"}, nil,
		func(id int32) map[string]string { return map[string]string{"broker.rack": "r" + strconv.Itoa(int(id))} })
	const topic, n = "nearby", 300
	c.createTopic(topic, 3, 3, nil)
	leaders := map[int32]int32{} // partition → leader
	for p := int32(0); p < 3; p++ {
		s, _ := c.partitionState(topic, p)
		leaders[p] = s.Leader
	}
	led := map[int32]bool{}
	for _, l := range leaders {
		led[l] = true
	}
	if len(led) < 2 {
		t.Fatalf("leaders %v: want partitions led by more than one broker, so that some are led outside rack r2", leaders)
	}

	prod := c.client(kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Partition: int32(i % 3), Value: []byte(fmt.Sprintf("v%03d", i))})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	before := map[int32]float64{}
	for id := int32(1); id <= 3; id++ {
		before[id] = c.consumerBytesOut(id)
	}

	// Rack r2: everything from broker 2.
	r2 := c.client(kgo.Rack("r2"), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if got := consumeEvery(t, r2, n); len(got) != n {
		t.Fatalf("rack r2 consumer read %d records, want %d", len(got), n)
	}
	r2.Close()
	after := map[int32]float64{}
	for id := int32(1); id <= 3; id++ {
		after[id] = c.consumerBytesOut(id)
	}
	if d := after[2] - before[2]; d < n*4 {
		t.Errorf("broker 2 (rack r2) sent %v record bytes to consumers, want at least the %d values' bytes", d, n*4)
	}
	for _, id := range []int32{1, 3} {
		if d := after[id] - before[id]; d != 0 {
			t.Errorf("broker %d (rack r%d) sent %v record bytes to the rack r2 consumer, want 0: its partitions should be read from broker 2", id, id, d)
		}
	}

	// No rack: each partition from its leader.
	before = after
	plain := c.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if got := consumeEvery(t, plain, n); len(got) != n {
		t.Fatalf("consumer without rack read %d records, want %d", len(got), n)
	}
	plain.Close()
	after = map[int32]float64{}
	for id := int32(1); id <= 3; id++ {
		after[id] = c.consumerBytesOut(id)
		if d := after[id] - before[id]; led[id] != (d > 0) {
			t.Errorf("broker %d sent %v record bytes to the consumer without a rack; leads a partition: %v (leaders %v)", id, d, led[id], leaders)
		}
	}

	// kcat (librdkafka) with client.rack=r2.
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Log("kcat not installed: librdkafka follower fetching not checked")
		return
	}
	before = after
	kctx, kcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer kcancel()
	out, err := exec.CommandContext(kctx, kcat, "-C", "-b", strings.Join(c.seeds(), ","), "-t", topic, "-o", "beginning", "-e", "-q",
		"-X", "client.rack=r2", "-f", "%s\n").Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	if lines := strings.Count(string(out), "\n"); lines != n {
		t.Fatalf("kcat read %d records, want %d", lines, n)
	}
	for id := int32(1); id <= 3; id++ {
		d := c.consumerBytesOut(id) - before[id]
		if id == 2 && d < n*4 || id != 2 && d != 0 {
			t.Errorf("kcat with client.rack=r2: broker %d sent %v record bytes", id, d)
		}
	}
}
