package clustertest_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clustertest"
	"gregor/storage/record"
	"gregor/test/harness"
)

// rawProduce sends batch to topic-0 on broker id as one acks=-1
// ProduceRequest (no client retries) and returns the partition's error
// code and base offset.
func rawProduce(t *testing.T, c *clustertest.Cluster, id int32, topic string, batch []byte, timeout time.Duration) (int16, int64) {
	t.Helper()
	// kgo rewrites a raw ProduceRequest's acks to the client's own.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(id)), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := harness.ProduceRequest(topic, 0, batch, -1, timeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		t.Fatalf("produce to broker %d: %v", id, err)
	}
	r := resp.Topics[0].Partitions[0]
	return r.ErrorCode, r.BaseOffset
}

// TestAcksAllRetryOfAnUnreplicatedBatch: an idempotent acks=-1 batch the
// followers never fetched times out (REQUEST_TIMED_OUT; it stays in the
// leader's log, as in Kafka). Its retry is a duplicate, and a duplicate
// must wait for the high watermark like the original (Kafka's
// DelayedProduce waits for the duplicate's last offset too): answering it
// at once acknowledges a record only the leader has, which a new leader
// then loses. Seen in the in-process cluster: a zombie leader cut off
// from ZooKeeper acknowledged a client's retry this way and the record
// was truncated away when the zombie rejoined.
func TestAcksAllRetryOfAnUnreplicatedBatch(t *testing.T) {
	c := clustertest.MakeClusterWith(t, 3, clustertest.Options{Props: map[string]string{
		"replica.lag.time.max.ms": "60000", // the followers stay in the ISR throughout
	}})
	c.CreateTopicAssigned("dup", map[int32][]int32{0: {1, 2, 3}})
	// The followers die, but ZooKeeper still holds their sessions: nobody
	// moves the ISR, the leader just gets no fetches.
	c.Crash(2)
	c.Crash(3)

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(1)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ipid, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, cl)
	if err != nil || ipid.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v, code %d", err, ipid.ErrorCode)
	}
	batch, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli(),
		Producer: &record.Producer{ID: ipid.ProducerID, Epoch: ipid.ProducerEpoch, BaseSequence: 0}},
		[]record.BatchRecord{{Value: []byte("only on the leader")}})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := rawProduce(t, c, 1, "dup", batch, 200*time.Millisecond); code != kerr.RequestTimedOut.Code {
		t.Fatalf("first attempt: code %d, want REQUEST_TIMED_OUT (%d): the followers are down", code, kerr.RequestTimedOut.Code)
	}
	code, off := rawProduce(t, c, 1, "dup", batch, 200*time.Millisecond)
	if code == 0 {
		t.Fatalf("the retry of a batch no follower has was acknowledged at offset %d with acks=-1", off)
	}
	if code != kerr.RequestTimedOut.Code {
		t.Errorf("retry: code %d, want REQUEST_TIMED_OUT (%d)", code, kerr.RequestTimedOut.Code)
	}
}
