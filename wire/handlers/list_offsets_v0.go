package handlers

// ListOffsets v0 (OldStyleOffsets, MaxNumOffsets), as Kafka's
// handleListOffsetRequestV0 and Partition.legacyFetchOffsetsForTimestamp:
//
//   - timestamp -1 (latest), -2 (earliest) or a time in ms: up to
//     MaxNumOffsets segment base offsets, newest first, from
//     storage.Log.LegacyOffsetsBefore (segments by .log modification
//     time; the log end offset counts as a candidate stamped now); other
//     negative timestamps → UNSUPPORTED_VERSION;
//   - a consumer (ReplicaID -1) never sees offsets above the high
//     watermark: those are replaced by the high watermark;
//   - only the leader answers (NOT_LEADER_OR_FOLLOWER), except for the
//     debugging replica id -2; not hosted → UNKNOWN_TOPIC_OR_PARTITION;
//     no Describe on the topic → TOPIC_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/wire"
	"gregor/wire/security/acl"
)

// legacyOffsetLog is the storage.Log method v0 needs (StorageLog has it).
type legacyOffsetLog interface {
	LegacyOffsetsBefore(timestamp int64, maxNumOffsets int32) []int64
}

func handleListOffsetsV0(b *Broker, rc *wire.RequestContext, req *kmsg.ListOffsetsRequest) wire.Reply {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	described := filterAuthorized(b, rc, acl.OpDescribe, acl.ResourceTopic, req.Topics, func(t kmsg.ListOffsetsRequestTopic) string { return t.Topic })
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			offs, err := []int64(nil), kerr.TopicAuthorizationFailed
			if allowed(described, rt.Topic) {
				offs, err = legacyOffsets(b, req.ReplicaID, storage.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}, &rp)
			}
			if err != nil {
				sp.ErrorCode = err.Code
				offs = []int64{}
			}
			sp.OldStyleOffsets = offs
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return wire.Now(wire.Response{Msg: resp})
}

func legacyOffsets(b *Broker, replicaID int32, tp storage.TopicPartition, rp *kmsg.ListOffsetsRequestTopicPartition) ([]int64, *kerr.Error) {
	if rp.Timestamp < listEarliest {
		return nil, kerr.UnsupportedVersion
	}
	h, ok := b.Replicas.Get(tp)
	if !ok {
		return nil, notHosted(b, tp)
	}
	v := h.View()
	if v.Err != nil {
		return nil, v.Err
	}
	if !v.IsLeader() && replicaID != -2 {
		return nil, kerr.NotLeaderForPartition
	}
	lg, ok := v.Log.(legacyOffsetLog)
	if !ok || v.Log == nil {
		return nil, kerr.KafkaStorageError
	}
	offs := lg.LegacyOffsetsBefore(rp.Timestamp, rp.MaxNumOffsets)
	if replicaID != -1 {
		return offs, nil
	}
	hw := v.HighWatermark
	i := 0
	for i < len(offs) && offs[i] > hw {
		i++
	}
	if i == 0 {
		return offs, nil
	}
	return append([]int64{hw}, offs[i:]...), nil
}
