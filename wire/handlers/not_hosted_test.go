package handlers

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metadata"
	"gregor/storage"
)

// snapshotTopics is a TopicSource that only answers Snapshot.
type snapshotTopics struct {
	TopicSource
	s *metadata.Snapshot
}

func (f snapshotTopics) Snapshot() *metadata.Snapshot { return f.s }

// TestNotHostedButKnownIsNotLeader: a partition this broker does not host
// but its metadata cache knows (a restarted broker that has its
// UpdateMetadata but not yet its LeaderAndIsr, asked by a client holding
// stale metadata) is NOT_LEADER_OR_FOLLOWER for produce, fetch, ListOffsets
// and OffsetForLeaderEpoch — retriable for ever, where franz-go fails every
// buffered record after 4 UNKNOWN_TOPIC_OR_PARTITION in a row. A partition
// the cache does not know stays UNKNOWN_TOPIC_OR_PARTITION.
func TestNotHostedButKnownIsNotLeader(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	e.b.Topics = snapshotTopics{s: &metadata.Snapshot{ControllerID: 1, Topics: map[string]*metadata.Topic{
		"chaos": {Name: "chaos", Partitions: []metadata.Partition{{Partition: 0, Leader: 0}, {Partition: 1, Leader: 0}}},
	}}}
	known := storage.TopicPartition{Topic: "chaos", Partition: 1}
	for _, tc := range []struct {
		tp   storage.TopicPartition
		want *kerr.Error
	}{
		{known, kerr.NotLeaderForPartition},
		{storage.TopicPartition{Topic: "chaos", Partition: 2}, kerr.UnknownTopicOrPartition}, // past the partition count
		{storage.TopicPartition{Topic: "nope"}, kerr.UnknownTopicOrPartition},
	} {
		if p := e.produce(9, -1, tc.tp, mkBatch(t, 1, 1, nil, false)); p.ErrorCode != tc.want.Code {
			t.Errorf("produce %s: code %d, want %s", tc.tp, p.ErrorCode, tc.want.Message)
		}
		if p := decodeFetch(t, 12, e.call(1, 12, fetchReq(tc.tp, 0, 0, 0))).Topics[0].Partitions[0]; p.ErrorCode != tc.want.Code {
			t.Errorf("fetch %s: code %d, want %s", tc.tp, p.ErrorCode, tc.want.Message)
		}
		lo := kmsg.NewPtrListOffsetsRequest()
		lo.ReplicaID = -1
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = tc.tp.Topic
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = tc.tp.Partition, -1, -1
		lt.Partitions = append(lt.Partitions, lp)
		lo.Topics = append(lo.Topics, lt)
		if r := e.call(2, 7, lo).Msg.(*kmsg.ListOffsetsResponse); r.Topics[0].Partitions[0].ErrorCode != tc.want.Code {
			t.Errorf("list offsets %s: code %d, want %s", tc.tp, r.Topics[0].Partitions[0].ErrorCode, tc.want.Message)
		}
		oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
		oe.ReplicaID = 2
		ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
		ot.Topic = tc.tp.Topic
		op := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		op.Partition, op.CurrentLeaderEpoch, op.LeaderEpoch = tc.tp.Partition, -1, 0
		ot.Partitions = append(ot.Partitions, op)
		oe.Topics = append(oe.Topics, ot)
		if r := e.call(23, 4, oe).Msg.(*kmsg.OffsetForLeaderEpochResponse); r.Topics[0].Partitions[0].ErrorCode != tc.want.Code {
			t.Errorf("offset for leader epoch %s: code %d, want %s", tc.tp, r.Topics[0].Partitions[0].ErrorCode, tc.want.Message)
		}
	}
}
