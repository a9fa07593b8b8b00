package fetcher

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
)

func fetchOnce(t *testing.T, b *testBroker, replicaID int32, offset int64, currentEpoch, lastFetchedEpoch int32) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.SessionEpoch = replicaID, 0, 1, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = tp0.Topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.PartitionMaxBytes = 0, offset, currentEpoch, lastFetchedEpoch, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, b.client.SeedBrokers()[0])
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0]
}

func lastOffset(t *testing.T, p kmsg.FetchResponseTopicPartition) int64 {
	t.Helper()
	last := int64(-1)
	for _, b := range wholeBatchesHeaders(t, p.RecordBatches) {
		last = b.last
	}
	return last
}

func wholeBatchesHeaders(t *testing.T, b []byte) []batchID {
	t.Helper()
	var out []batchID
	for rest := wholeBatches(b); len(rest) > 0; {
		h, err := parseHeader(rest)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, batchID{h.BaseOffset, h.LastOffset(), h.PartitionLeaderEpoch, h.CRC})
		rest = rest[h.Size():]
	}
	return out
}

// TestReplicaFetchProtocol checks the leader's side of the wire: consumers
// stop at the high watermark while a follower's Fetch reads to the log
// end offset and moves the high watermark; DivergingEpoch,
// OffsetForLeaderEpoch and the KIP-320 epoch checks.
func TestReplicaFetchProtocol(t *testing.T) {
	c := newCluster(t, 1, 2)
	c.apply(tp0, 1, 3, []int32{1, 2}, []int32{1, 2}, 1)
	c.brokers[2].fm.Unfollow(tp0) // drive broker 2's side by hand
	for range 3 {
		if _, err := produce(t, c.brokers[1], tp0, 1, 5*time.Second, "a", "b"); err != nil {
			t.Fatal(err)
		}
	}
	lead := c.brokers[1]
	// The follower has not fetched in epoch 3: HW stays at 0.
	if p := fetchOnce(t, lead, -1, 0, 3, -1); p.ErrorCode != 0 || p.HighWatermark != 0 || len(p.RecordBatches) != 0 {
		t.Fatalf("consumer fetch above the HW: err %d hw %d %d bytes", p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
	}
	p := fetchOnce(t, lead, 2, 0, 3, -1)
	if p.ErrorCode != 0 || lastOffset(t, p) != 5 || p.HighWatermark != 0 {
		t.Fatalf("follower fetch from 0: err %d last offset %d hw %d, want records to 5 and hw 0", p.ErrorCode, lastOffset(t, p), p.HighWatermark)
	}
	// Fetching at 4 tells the leader the follower has 0-3: HW 4 (batch
	// boundaries are not required for the high watermark).
	if p := fetchOnce(t, lead, 2, 4, 3, 3); p.HighWatermark != 4 {
		t.Fatalf("hw after follower fetch at 4: %d", p.HighWatermark)
	}
	if p := fetchOnce(t, lead, -1, 0, 3, -1); lastOffset(t, p) != 3 {
		t.Fatalf("consumer reads to %d, want 3 (below HW 4)", lastOffset(t, p))
	}
	// KIP-320 and role checks.
	if p := fetchOnce(t, lead, -1, 0, 2, -1); p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("old epoch: %d, want FENCED_LEADER_EPOCH", p.ErrorCode)
	}
	if p := fetchOnce(t, lead, -1, 0, 4, -1); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("newer epoch: %d, want UNKNOWN_LEADER_EPOCH", p.ErrorCode)
	}
	// A follower serves a Fetch v11+ consumer (KIP-392), not a broker.
	if p := fetchOnce(t, c.brokers[2], -1, 0, 3, -1); p.ErrorCode != 0 || p.PreferredReadReplica != -1 {
		t.Fatalf("consumer fetch from the follower: error %d, preferred %d; want 0, -1 (KIP-392)", p.ErrorCode, p.PreferredReadReplica)
	}
	if p := fetchOnce(t, c.brokers[2], 7, 0, 3, -1); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("replica fetch from the follower: %d, want NOT_LEADER_OR_FOLLOWER", p.ErrorCode)
	}
	if p := fetchOnce(t, lead, 7, 0, 3, -1); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fetch from a non-replica broker id: %d, want NOT_LEADER_OR_FOLLOWER", p.ErrorCode)
	}

	ofle := func(b *testBroker, current, epoch int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = 2
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = tp0.Topic
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = 0, current, epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(context.Background(), b.client.SeedBrokers()[0])
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0]
	}
	for _, tc := range []struct {
		current, epoch int32
		code           int16
		wantEpoch      int32
		wantEnd        int64
	}{
		{3, 3, 0, 3, 6},   // the latest epoch ends at the log end offset
		{3, 1, 0, 1, 0},   // below every entry: the first entry's start
		{3, 9, 0, -1, -1}, // above every entry: unknown
		{2, 3, kerr.FencedLeaderEpoch.Code, -1, -1},
	} {
		p := ofle(lead, tc.current, tc.epoch)
		if p.ErrorCode != tc.code || p.LeaderEpoch != tc.wantEpoch || p.EndOffset != tc.wantEnd {
			t.Errorf("OffsetForLeaderEpoch(current %d, epoch %d) = err %d (%d, %d), want err %d (%d, %d)",
				tc.current, tc.epoch, p.ErrorCode, p.LeaderEpoch, p.EndOffset, tc.code, tc.wantEpoch, tc.wantEnd)
		}
	}
	if p := ofle(c.brokers[2], 3, 3); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("OffsetForLeaderEpoch on the follower: %d, want NOT_LEADER_OR_FOLLOWER", p.ErrorCode)
	}

	// A new term on the leader (epoch 4) with one more batch at 6-7. A
	// follower at offset 7 whose last epoch is 3 diverges: epoch 3 ends at
	// 6 on the leader.
	if errs := lead.rm.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp0, Leader: 1, LeaderEpoch: 4, ISR: []int32{1, 2}, Replicas: []int32{1, 2},
		ZkVersion: 9, Config: storage.DefaultLogConfig(), MinInsyncReplicas: 1}}); len(errs) > 0 {
		t.Fatal(errs)
	}
	if off, err := produce(t, lead, tp0, 1, 5*time.Second, "c", "d"); err != nil || off != 6 {
		t.Fatalf("produce in epoch 4: %d %v", off, err)
	}
	if p := fetchOnce(t, lead, 2, 7, 4, 3); p.DivergingEpoch.Epoch != 3 || p.DivergingEpoch.EndOffset != 6 || len(p.RecordBatches) != 0 {
		t.Fatalf("diverging epoch %+v with %d bytes, want {3 6} and none", p.DivergingEpoch, len(p.RecordBatches))
	}
	if p := fetchOnce(t, lead, 2, 6, 4, 3); p.DivergingEpoch.EndOffset != -1 || lastOffset(t, p) != 7 {
		t.Fatalf("consistent follower at 6: diverging %+v last offset %d, want none and 7", p.DivergingEpoch, lastOffset(t, p))
	}
}

func parseHeader(b []byte) (record.Header, error) { return record.ParseHeader(b) }
