package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// findCoordinator asks broker addr for group's coordinator with a raw
// FindCoordinator (no client retries): the error code and node id.
func findCoordinator(t *testing.T, addr, group string) (int16, int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// kgo sends the highest version both sides support: v4+ answers in
	// Coordinators, older ones at the top level.
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey, req.CoordinatorKeys = group, []string{group}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		t.Fatalf("FindCoordinator on %s: %v", addr, err)
	}
	if len(resp.Coordinators) == 1 {
		return resp.Coordinators[0].ErrorCode, resp.Coordinators[0].NodeID
	}
	return resp.ErrorCode, resp.NodeID
}

// liveBrokers is the number of brokers in broker addr's Metadata answer
// (raw request: that broker's own cache).
func liveBrokers(t *testing.T, addr string) int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // none: brokers only
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		t.Fatalf("Metadata on %s: %v", addr, err)
	}
	return len(resp.Brokers)
}

// TestOffsetsTopicWaitsForReplicationFactorBrokers: as in Kafka, a
// cluster with fewer live brokers than offsets.topic.replication.factor
// does not create __consumer_offsets (it used to create it with the
// factor lowered to the live brokers, under-replicated for good); it
// answers FindCoordinator with COORDINATOR_NOT_AVAILABLE, which clients
// retry, and creates the topic with the full factor once enough brokers
// have registered.
func TestOffsetsTopicWaitsForReplicationFactorBrokers(t *testing.T) {
	c := startCluster(t, 1, map[string]string{"offsets.topic.replication.factor": "3"}, nil)
	notCreated := func(when string) {
		t.Helper()
		if _, _, err := c.store.Get(zkmeta.TopicPath("__consumer_offsets")); !errors.Is(err, metastore.ErrNoNode) {
			t.Fatalf("%s: /brokers/topics/__consumer_offsets: %v, want no node", when, err)
		}
	}
	if code, _ := findCoordinator(t, c.brokers[1].Addr(), "g"); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("1 of 3 brokers: FindCoordinator %s, want COORDINATOR_NOT_AVAILABLE", codeName(code))
	}
	notCreated("1 of 3 brokers")

	c.startExtraBroker(2)
	c.waitFor("broker 1's metadata to list 2 brokers", 30*time.Second, func() (bool, string) {
		n := liveBrokers(t, c.brokers[1].Addr())
		return n == 2, fmt.Sprint(n, " brokers")
	})
	for _, id := range []int32{1, 2} {
		if code, _ := findCoordinator(t, c.brokers[id].Addr(), "g"); code != kerr.CoordinatorNotAvailable.Code {
			t.Fatalf("2 of 3 brokers: FindCoordinator on broker %d %s, want COORDINATOR_NOT_AVAILABLE", id, codeName(code))
		}
	}
	notCreated("2 of 3 brokers")

	c.startExtraBroker(3)
	var node int32
	c.waitFor("a group coordinator with 3 live brokers", 60*time.Second, func() (bool, string) {
		code, id := findCoordinator(t, c.brokers[1].Addr(), "g")
		node = id
		return code == 0, codeName(code)
	})
	if node < 1 || node > 3 {
		t.Fatalf("coordinator node %d", node)
	}
	c.waitFor("__consumer_offsets with factor 3 in broker 1's metadata", 30*time.Second, func() (bool, string) {
		d, err := describe(t, c.brokers[1], "__consumer_offsets")
		if err != nil {
			return false, err.Error()
		}
		if len(d.Partitions) == 0 {
			return false, "no partitions"
		}
		for _, p := range d.Partitions {
			if len(p.Replicas) != 3 {
				return false, fmt.Sprintf("partition %d replicas %v", p.Partition, p.Replicas)
			}
		}
		return true, ""
	})

	// A group works: it commits through the coordinator.
	cl := c.client(kgo.ConsumerGroup("g"), kgo.ConsumeTopics("rf-t"), kgo.AllowAutoTopicCreation())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "rf-t", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("group consumer read nothing")
		}
		if fs.NumRecords() > 0 {
			break
		}
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
}
