package handlers

// DeleteRecords: v0-v2
//
// Behaviour:
//   - Advances each partition's log start offset to Offset (records below
//     it become unreadable; whole segments below it are deleted by the
//     storage engine). Offset -1 means "up to the high watermark".
//   - Offset beyond the high watermark (or below -1) → OFFSET_OUT_OF_RANGE;
//     an offset at or below the current log start offset changes nothing
//     and answers the current one. Not hosted → UNKNOWN_TOPIC_OR_PARTITION;
//     not leader → NOT_LEADER_OR_FOLLOWER; offline → KAFKA_STORAGE_ERROR.
//   - The partition actor does the change (it is the log's only writer);
//     the request waits at most TimeoutMillis per partition, then
//     REQUEST_TIMED_OUT. LowWatermark is the log start offset afterwards.
//     With followers Kafka waits until every replica has moved its low
//     watermark; single node there is nothing to wait for.
//   - A broker shutting down (handlers' Close) stops between partitions:
//     the partitions not reached yet answer REQUEST_TIMED_OUT unchanged.
//
// Version notes: v1 same as v0; v2 flexible versions.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(21, 0, 2, handleDeleteRecords) }

func handleDeleteRecords(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	// Delete on each topic (Kafka's check).
	deletable := filterAuthorized(b, rc, acl.OpDelete, acl.ResourceTopic, req.Topics, func(t kmsg.DeleteRecordsRequestTopic) string { return t.Topic })
	return b.later(func() wire.Response {
		timeout := time.Duration(max(req.TimeoutMillis, 0)) * time.Millisecond
		closing := b.closing()
		for _, rt := range req.Topics {
			st := kmsg.NewDeleteRecordsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewDeleteRecordsResponseTopicPartition()
				sp.Partition = rp.Partition
				if !allowed(deletable, rt.Topic) {
					sp.ErrorCode, sp.LowWatermark = kerr.TopicAuthorizationFailed.Code, -1
					st.Partitions = append(st.Partitions, sp)
					continue
				}
				select {
				case <-closing: // shutting down: leave the rest unchanged
					sp.ErrorCode, sp.LowWatermark = kerr.RequestTimedOut.Code, -1
					st.Partitions = append(st.Partitions, sp)
					continue
				default:
				}
				r := b.Replicas.DeleteRecords(storage.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}, rp.Offset, timeout)
				sp.LowWatermark = r.LowWatermark
				if r.Err != nil {
					sp.ErrorCode, sp.LowWatermark = r.Err.Code, -1
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return wire.Response{Msg: resp}
	})
}
