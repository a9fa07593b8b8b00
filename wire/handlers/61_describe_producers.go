package handlers

// DescribeProducers: v0
//
// Behaviour (KIP-664, Kafka's ReplicaManager.activeProducerState):
//   - Per partition, the active idempotent and transactional producers of
//     its log: producer id and epoch, last sequence (-1 when none is
//     retained), last timestamp, coordinator epoch of the last marker (-1
//     before any) and the first offset of the open transaction (-1 when
//     none). Any replica hosting the partition answers (followers rebuild
//     the same state from the replicated batches), as Kafka's does;
//     `kafka-transactions.sh describe-producers` asks the leader unless
//     given --broker-id.
//   - Not hosted here → NOT_LEADER_OR_FOLLOWER when the cluster knows the
//     partition, else UNKNOWN_TOPIC_OR_PARTITION; offline →
//     KAFKA_STORAGE_ERROR; restarting → NOT_LEADER_OR_FOLLOWER.
//   - The state is owned by the partition actor: the handler asks each
//     one on a Broker.later goroutine (partition.Handle.DescribeProducers).
//   - Producer ids are not expired yet (producer.id.expiration.ms): every
//     producer whose batches are in the log is listed.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(61, 0, 0, handleDescribeProducers) }

func handleDescribeProducers(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeProducersRequest)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	readable := filterAuthorized(b, rc, acl.OpRead, acl.ResourceTopic, req.Topics, func(t kmsg.DescribeProducersRequestTopic) string { return t.Topic })
	return b.later(func() wire.Response {
		ctx := reqCtx(rc)
		for _, rt := range req.Topics {
			st := kmsg.NewDescribeProducersResponseTopic()
			st.Topic = rt.Topic
			for _, p := range rt.Partitions {
				sp := kmsg.NewDescribeProducersResponseTopicPartition()
				sp.Partition = p
				tp := storage.TopicPartition{Topic: rt.Topic, Partition: p}
				if !allowed(readable, rt.Topic) { // topic Read (Kafka's check)
					sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
					st.Partitions = append(st.Partitions, sp)
					continue
				}
				h, ok := b.Replicas.Get(tp)
				if !ok {
					sp.ErrorCode = notHosted(b, tp).Code
					st.Partitions = append(st.Partitions, sp)
					continue
				}
				ps, err := h.DescribeProducers(ctx)
				if err != nil {
					sp.ErrorCode = err.Code
					st.Partitions = append(st.Partitions, sp)
					continue
				}
				sp.ActiveProducers = make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, 0, len(ps))
				for _, s := range ps {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = s.ProducerID, int32(s.ProducerEpoch), s.LastSequence
					ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = s.LastTimestamp, s.CoordinatorEpoch, s.CurrentTxnStartOffset
					sp.ActiveProducers = append(sp.ActiveProducers, ap)
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return wire.Response{Msg: resp}
	})
}
