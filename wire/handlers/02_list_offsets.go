package handlers

// ListOffsets: v0-v7 (v0 in list_offsets_v0.go)
//
// Behaviour:
//   - Timestamp -2 (earliest): the log start offset.
//   - Timestamp -1 (latest): for consumers (ReplicaID -1) the high
//     watermark at READ_UNCOMMITTED, the last stable offset at
//     READ_COMMITTED (v2+ IsolationLevel 1, KIP-98); the log end offset
//     for a replica (ReplicaID >= 0). Timestamp lookups are bounded the
//     same way (Kafka's fetchOffsetForTimestamp lastFetchableOffset).
//   - Timestamp -3 (max timestamp, KIP-734, v7+): the offset and timestamp
//     of the record with the largest timestamp (Log.OffsetOfMaxTimestamp).
//     Below v7 a negative timestamp other than -1/-2 is a plain (unmatched)
//     lookup, as in Kafka.
//   - Any other timestamp: the earliest offset whose timestamp is >= it
//     (Log.OffsetForTimestamp); none, or one a consumer may not read yet
//     (>= the bound of latest) → offset -1, timestamp -1, no error.
//   - LeaderEpoch (v4+) is the partition's current leader epoch (Kafka
//     answers the epoch of the returned offset; the current one is what
//     clients use for KIP-320 fencing after a leader change).
//   - CurrentLeaderEpoch (v4+, KIP-320): older → FENCED_LEADER_EPOCH, newer →
//     UNKNOWN_LEADER_EPOCH. Not hosted → UNKNOWN_TOPIC_OR_PARTITION; offline
//     → KAFKA_STORAGE_ERROR; not leader → NOT_LEADER_OR_FOLLOWER.
//
// Version notes:
//   - v0: OldStyleOffsets with MaxNumOffsets (list_offsets_v0.go).
//   - v1: single offset + timestamp. v2: isolation level. v3: same as v2.
//   - v4: CurrentLeaderEpoch and LeaderEpoch (KIP-320). v5: same as v4.
//   - v6: flexible versions. v7: timestamp -3 (KIP-734).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/storage"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(2, 0, 7, handleListOffsets) }

// Special ListOffsets timestamps.
const (
	listLatest       = -1
	listEarliest     = -2
	listMaxTimestamp = -3
)

func handleListOffsets(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.ListOffsetsRequest)
	if req.Version == 0 {
		return handleListOffsetsV0(b, rc, req) // list_offsets_v0.go
	}
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	// Describe on each topic (Kafka's check); else TOPIC_AUTHORIZATION_FAILED.
	described := filterAuthorized(b, rc, acl.OpDescribe, acl.ResourceTopic, req.Topics, func(t kmsg.ListOffsetsRequestTopic) string { return t.Topic })
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			tp := storage.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			off, ts, epoch, err := int64(0), int64(0), int32(0), kerr.TopicAuthorizationFailed
			if allowed(described, rt.Topic) {
				off, ts, epoch, err = listOffset(b, req, tp, &rp)
			}
			if err != nil {
				sp.ErrorCode = err.Code
				sp.Offset, sp.Timestamp, sp.LeaderEpoch = -1, -1, -1
			} else {
				sp.Offset, sp.Timestamp, sp.LeaderEpoch = off, ts, epoch
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return wire.Now(wire.Response{Msg: resp})
}

func listOffset(b *Broker, req *kmsg.ListOffsetsRequest, tp storage.TopicPartition, rp *kmsg.ListOffsetsRequestTopicPartition) (offset, ts int64, epoch int32, err *kerr.Error) {
	h, ok := b.Replicas.Get(tp)
	if !ok {
		return 0, 0, 0, notHosted(b, tp)
	}
	v := h.View()
	if v.Err != nil {
		return 0, 0, 0, v.Err
	}
	if !v.IsLeader() {
		return 0, 0, 0, kerr.NotLeaderForPartition
	}
	if req.Version >= 4 {
		if e := partition.CheckLeaderEpoch(rp.CurrentLeaderEpoch, v.LeaderEpoch); e != nil {
			return 0, 0, 0, e
		}
	}
	fetchable := v.HighWatermark
	if req.ReplicaID >= 0 {
		fetchable = v.LogEndOffset
	} else if req.Version >= 2 && req.IsolationLevel == 1 {
		fetchable = v.LastStableOffset
	}
	switch {
	case rp.Timestamp == listEarliest:
		return v.LogStartOffset, -1, v.LeaderEpoch, nil
	case rp.Timestamp == listLatest:
		return fetchable, -1, v.LeaderEpoch, nil
	case rp.Timestamp == listMaxTimestamp && req.Version >= 7:
		off, mts := v.Log.OffsetOfMaxTimestamp()
		if off < 0 || off >= fetchable {
			return -1, -1, v.LeaderEpoch, nil
		}
		return off, mts, v.LeaderEpoch, nil
	}
	off, fts, found, lerr := v.Log.OffsetForTimestamp(rp.Timestamp)
	if lerr != nil {
		k, _ := partition.AppendError(lerr)
		return 0, 0, 0, k
	}
	if !found || off >= fetchable {
		return -1, -1, v.LeaderEpoch, nil
	}
	return off, fts, v.LeaderEpoch, nil
}
