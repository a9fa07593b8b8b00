package handlers

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
	"gregor/partition"
	"gregor/replication/metadata"
	"gregor/storage"
	"gregor/storage/record"
	"gregor/wire"
)

// racksTopics is a TopicSource whose snapshot has brokers 0 (rack r1) and
// 1 (rack r2); nothing else is called by Fetch.
type racksTopics struct{ TopicSource }

func (racksTopics) Snapshot() *metadata.Snapshot {
	r1, r2 := "r1", "r2"
	return &metadata.Snapshot{ControllerID: 0, Brokers: []metadata.Broker{{ID: 0, Rack: &r1}, {ID: 1, Rack: &r2}}}
}

func consumerFetch(version int16, offset int64, rack string) *kmsg.FetchRequest {
	req := fetchReq(tpA, offset, 0, 0)
	req.Rack = rack
	req.SetVersion(version)
	return req
}

// TestFetchPreferredReadReplica: broker 0 leads tpA with follower 1 (rack
// r2) in sync. With replica.selector.class RackAwareReplicaSelector a
// v11 consumer in rack r2 gets PreferredReadReplica 1, the leader's
// offsets and no records; one in rack r1 (the leader's), one without a
// rack, a v10 one, and any consumer without the selector get records and
// -1.
func TestFetchPreferredReadReplica(t *testing.T) {
	e, proto := followerEnv(t, 10, 32)
	e.produceCopies(tpA, proto, 2)
	follow := fetchReq(tpA, 20, 0, 0) // follower 1 caught up: high watermark 20
	follow.ReplicaID = 1
	if p := decodeFetch(t, 11, e.call(1, 11, follow)).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != 20 {
		t.Fatalf("follower fetch: error %d, high watermark %d", p.ErrorCode, p.HighWatermark)
	}
	e.b.Topics = racksTopics{}
	e.b.Config = &config.Broker{BrokerID: 0, ReplicaSelector: config.RackAwareReplicaSelector}

	p := decodeFetch(t, 11, e.call(1, 11, consumerFetch(11, 0, "r2"))).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.PreferredReadReplica != 1 || len(p.RecordBatches) != 0 || p.HighWatermark != 20 || p.LastStableOffset != 20 || p.LogStartOffset != 0 {
		t.Fatalf("rack r2: error %d, preferred %d, %d record bytes, hw %d, lso %d, log start %d; want 0, 1, 0, 20, 20, 0",
			p.ErrorCode, p.PreferredReadReplica, len(p.RecordBatches), p.HighWatermark, p.LastStableOffset, p.LogStartOffset)
	}
	for _, c := range []struct {
		name    string
		version int16
		rack    string
	}{{"leader's rack", 11, "r1"}, {"no rack", 11, ""}, {"unknown rack", 12, "r9"}, {"v10", 10, "r2"}} {
		p := decodeFetch(t, c.version, e.call(1, c.version, consumerFetch(c.version, 0, c.rack))).Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.PreferredReadReplica != -1 || len(batches(t, p.RecordBatches)) != 2 {
			t.Errorf("%s: error %d, preferred %d, %d record bytes; want 0, -1, both batches", c.name, p.ErrorCode, p.PreferredReadReplica, len(p.RecordBatches))
		}
	}
	e.b.Config = &config.Broker{BrokerID: 0}
	if p := decodeFetch(t, 11, e.call(1, 11, consumerFetch(11, 0, "r2"))).Topics[0].Partitions[0]; p.PreferredReadReplica != -1 || len(p.RecordBatches) == 0 {
		t.Errorf("no replica.selector.class: preferred %d, %d record bytes; want -1 and records", p.PreferredReadReplica, len(p.RecordBatches))
	}
}

// TestFetchFromFollower: broker 0 follows tpA (leader 1, epoch 3). A v11+
// consumer reads it up to the follower's high watermark, its long poll
// wakes when the leader's high watermark reaches the follower; its
// CurrentLeaderEpoch is checked against the follower's, an offset past
// the follower's log end is OFFSET_OUT_OF_RANGE; a v10 consumer, a
// broker and ListOffsets still get NOT_LEADER_OR_FOLLOWER.
func TestFetchFromFollower(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.SkipRollFsync = true
	e := newDataEnv(t, cfg, tpA)
	st := partition.LeaderAndIsr{TopicPartition: tpA, Leader: 1, LeaderEpoch: 3, ISR: []int32{0, 1}, Replicas: []int32{0, 1}, Config: cfg}
	if errs := e.m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{st}); len(errs) != 0 {
		t.Fatal(errs)
	}
	h, _ := e.m.Get(tpA)
	appendAsFollower := func(batches []byte, leaderHW int64) {
		t.Helper()
		done := make(chan partition.FollowerResult, 1)
		h.AppendAsFollower(3, batches, leaderHW, 0, func(r partition.FollowerResult) { done <- r })
		if r := <-done; r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	appendAsFollower(codecBatch(t, record.CodecNone, 10, time.Now().UnixMilli(), 32), 0)

	p := decodeFetch(t, 11, e.call(1, 11, consumerFetch(11, 0, ""))).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.HighWatermark != 0 || len(p.RecordBatches) != 0 || p.PreferredReadReplica != -1 {
		t.Fatalf("follower below its high watermark: error %d, hw %d, %d bytes, preferred %d; want 0, 0, none, -1", p.ErrorCode, p.HighWatermark, len(p.RecordBatches), p.PreferredReadReplica)
	}

	// Long poll on the follower: wakes when the leader's high watermark arrives.
	poll := fetchReq(tpA, 0, 10000, 1)
	poll.SetVersion(11)
	reply := e.b.Handle(&wire.RequestContext{Ctx: context.Background(), Key: 1, Version: 11}, poll)
	if _, done := reply.TryResolve(); done {
		t.Fatal("long poll on the follower answered before its high watermark moved")
	}
	appendAsFollower(nil, 10)
	p = resolveFetchPart(t, reply, "follower long poll")
	if p.ErrorCode != 0 || p.HighWatermark != 10 || len(batches(t, p.RecordBatches)) != 1 {
		t.Fatalf("after the high watermark reached 10: error %d, hw %d, %d bytes; want 0, 10, the batch", p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
	}

	for _, c := range []struct {
		name    string
		version int16
		offset  int64
		epoch   int32
		replica int32
		want    *kerr.Error
	}{
		{"current epoch", 12, 0, 3, -1, nil},
		{"older epoch", 11, 0, 2, -1, kerr.FencedLeaderEpoch},
		{"newer epoch", 11, 0, 4, -1, kerr.UnknownLeaderEpoch},
		{"past the log end", 11, 11, -1, -1, kerr.OffsetOutOfRange},
		{"v10 consumer", 10, 0, -1, -1, kerr.NotLeaderForPartition},
		{"broker", 11, 0, -1, 2, kerr.NotLeaderForPartition},
	} {
		req := consumerFetch(c.version, c.offset, "")
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = c.epoch
		req.ReplicaID = c.replica
		p := decodeFetch(t, c.version, e.call(1, c.version, req)).Topics[0].Partitions[0]
		if want := int16(0); c.want != nil && p.ErrorCode != c.want.Code || c.want == nil && p.ErrorCode != want {
			t.Errorf("%s: error %d, want %v", c.name, p.ErrorCode, c.want)
		}
	}

	lo := kmsg.NewPtrListOffsetsRequest()
	lo.ReplicaID = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = tpA.Topic
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp = tpA.Partition, -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	if r := e.call(2, 5, lo).Msg.(*kmsg.ListOffsetsResponse); r.Topics[0].Partitions[0].ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("ListOffsets to the follower: error %d, want NOT_LEADER_OR_FOLLOWER", r.Topics[0].Partitions[0].ErrorCode)
	}
}
