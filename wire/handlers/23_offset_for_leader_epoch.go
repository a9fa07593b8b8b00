package handlers

// OffsetForLeaderEpoch: v0-v4
//
// Behaviour (KIP-101, KIP-279, KIP-320):
//   - For each partition, the end offset of the requested LeaderEpoch in
//     the leader's log: for the leader's latest epoch its log end offset;
//     for an older epoch the start offset of the next higher epoch, with
//     the largest epoch <= the requested one (KIP-279); unknown or above
//     every epoch → LeaderEpoch -1, EndOffset -1. Followers truncate to
//     min(this end offset, their own end offset for that epoch) after a
//     leader change, so no follower keeps records the leader lacks.
//   - Only the leader answers (NOT_LEADER_OR_FOLLOWER otherwise), except a
//     v3+ request with ReplicaID -2 (the debugging consumer id), which any
//     replica answers, as in Kafka.
//   - CurrentLeaderEpoch (v2+, KIP-320): older → FENCED_LEADER_EPOCH,
//     newer → UNKNOWN_LEADER_EPOCH. Not hosted → UNKNOWN_TOPIC_OR_PARTITION;
//     offline → KAFKA_STORAGE_ERROR.
//
// Version notes:
//   - v0: EndOffset only. v1: LeaderEpoch in the response.
//   - v2: CurrentLeaderEpoch, ThrottleMillis. v3: ReplicaID.
//   - v4: flexible versions.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/storage"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(23, 0, 4, handleOffsetForLeaderEpoch) }

// debugReplicaID is Kafka's DEBUGGING_REPLICA_ID (-2).
const debugReplicaID = -2

func handleOffsetForLeaderEpoch(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	// ClusterAction on the cluster (quietly) allows every topic, else
	// Describe on each (Kafka's checks).
	var describable map[string]bool
	if !b.authorizeQuiet(rc, acl.OpClusterAction, acl.ResourceCluster, acl.ClusterName) {
		describable = filterAuthorized(b, rc, acl.OpDescribe, acl.ResourceTopic, req.Topics, func(t kmsg.OffsetForLeaderEpochRequestTopic) string { return t.Topic })
	}
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			tp := storage.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			if !allowed(describable, rt.Topic) {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				sp.LeaderEpoch, sp.EndOffset = -1, -1
			} else if err := epochEndOffset(b, req, tp, &rp, &sp); err != nil {
				sp.ErrorCode = err.Code
				sp.LeaderEpoch, sp.EndOffset = -1, -1
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return wire.Now(wire.Response{Msg: resp})
}

func epochEndOffset(b *Broker, req *kmsg.OffsetForLeaderEpochRequest, tp storage.TopicPartition,
	rp *kmsg.OffsetForLeaderEpochRequestTopicPartition, sp *kmsg.OffsetForLeaderEpochResponseTopicPartition) *kerr.Error {
	h, ok := b.Replicas.Get(tp)
	if !ok {
		return notHosted(b, tp)
	}
	v := h.View()
	if v.Err != nil {
		return v.Err
	}
	if v.Log == nil || !v.IsLeader() && !(req.Version >= 3 && req.ReplicaID == debugReplicaID) {
		return kerr.NotLeaderForPartition
	}
	if req.Version >= 2 {
		if err := partition.CheckLeaderEpoch(rp.CurrentLeaderEpoch, v.LeaderEpoch); err != nil {
			return err
		}
	}
	sp.LeaderEpoch, sp.EndOffset = v.Log.EndOffsetForEpoch(rp.LeaderEpoch)
	return nil
}
