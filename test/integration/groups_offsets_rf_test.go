package integration

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// TestSingleNodeGroupsWithoutOffsetsReplicationFactor: a single node with
// embedded metadata and no offsets.topic.replication.factor (default 3,
// as in Kafka) still serves consumer groups: the cluster can never have
// more than this broker, so __consumer_offsets is created with factor 1
// instead of COORDINATOR_NOT_AVAILABLE for ever (with ZooKeeper the
// factor is required; see test/cluster).
func TestSingleNodeGroupsWithoutOffsetsReplicationFactor(t *testing.T) {
	b := harness.StartBroker(t, nil)
	b.Stop()
	delete(b.Props, "offsets.topic.replication.factor") // the harness sets 1
	b.Start()
	createTopic(t, b, "norf", 1, nil)
	produceValues(t, b, "norf", "v", 0, 5)
	cl := b.Client(kgo.ConsumerGroup("norf-group"), kgo.ConsumeTopics("norf"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pollRecords(ctx, t, cl, 5, "group consumer")
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	td, err := kadm.NewClient(b.Client()).ListTopicsWithInternal(ctx, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	d, ok := td["__consumer_offsets"]
	if !ok || d.Err != nil || len(d.Partitions) == 0 {
		t.Fatalf("__consumer_offsets: %+v", d)
	}
	for _, p := range d.Partitions {
		if len(p.Replicas) != 1 {
			t.Fatalf("__consumer_offsets partition %d replicas %v, want 1", p.Partition, p.Replicas)
		}
	}
}
