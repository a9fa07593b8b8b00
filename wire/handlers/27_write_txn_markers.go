package handlers

// WriteTxnMarkers: v0-v1
//
// Behaviour (Kafka's KafkaApis.handleWriteTxnMarkersRequest, ZooKeeper
// mode with the classic group coordinator):
//   - Sent by a transaction coordinator to each partition leader (the local
//     one included) once a transaction is decided. For every marker and
//     partition one control batch is appended: transactional and control
//     attributes, the marker's producer id and epoch, base sequence -1,
//     one EndTxnMarker record (type COMMIT or ABORT, the coordinator
//     epoch), timestamped with the broker clock (LogAppendTime topics: the
//     append time), acks=-1 like any coordinator write.
//   - Per partition: not hosted here or offline → UNKNOWN_TOPIC_OR_PARTITION
//     (Kafka finds no log); a follower or a stopping replica →
//     NOT_LEADER_OR_FOLLOWER; an epoch older than the producer's →
//     INVALID_PRODUCER_EPOCH; a coordinator epoch older than the last
//     marker's → TRANSACTION_COORDINATOR_FENCED; NOT_ENOUGH_REPLICAS(_AFTER_APPEND)
//     as for acks=-1 produce; not replicated within requestTimeout →
//     REQUEST_TIMED_OUT. The coordinator retries until each succeeds.
//   - The marker ends the producer's transaction on the partition (the
//     last stable offset moves past it once the high watermark passes the
//     marker); an abort is recorded in the segment's .txnindex.
//   - A successful marker on a __consumer_offsets partition is passed to
//     the group coordinator (GroupTxnCompleter, when b.Groups implements
//     it), which makes the producer's pending transactional offsets
//     visible (commit) or drops them (abort): Kafka's
//     groupCoordinator.onTransactionCompleted.
//   - The appends are sent to the partition actors from the reader
//     goroutine without waiting; the response waits on a Broker.later
//     goroutine.
//
// Version notes:
//   - v0: markers with producer id, epoch, result, partitions, coordinator epoch.
//   - v1: flexible versions (KIP-890's TransactionVersion field is v2, not served).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(27, 0, 1, handleWriteTxnMarkers) }

// offsetsTopicName is the group coordinator's internal topic, whose
// markers are reported to GroupTxnCompleter.
const offsetsTopicName = "__consumer_offsets"

// markerRequestTimeout bounds the wait for the markers' replication:
// Kafka's request.timeout.ms default (30000), which its handler passes as
// the append timeout; Gregor has no such broker key.
const markerRequestTimeout = 30 * time.Second

// GroupTxnCompleter is implemented by a GroupSource that keeps
// transactional offsets (TxnOffsetCommit): the WriteTxnMarkers handler
// calls it, when b.Groups implements it, for each __consumer_offsets
// partition whose marker was appended.
type GroupTxnCompleter interface {
	// CompleteTxnOffsets makes the transactional offsets that producerID staged in __consumer_offsets
	// partition offsetsPartition visible (commit) or drops them (abort), after the marker is in the log.
	CompleteTxnOffsets(offsetsPartition int32, producerID int64, producerEpoch int16, commit bool)
}

// pendingMarker is one marker append sent to a partition actor.
type pendingMarker struct {
	out    *kmsg.WriteTxnMarkersResponseMarkerTopicPartition
	tp     storage.TopicPartition
	marker *kmsg.WriteTxnMarkersRequestMarker
	msg    *partition.Produce
	reply  chan partition.ProduceResult
}

func handleWriteTxnMarkers(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.WriteTxnMarkersRequest)
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	resp.Markers = make([]kmsg.WriteTxnMarkersResponseMarker, len(req.Markers))
	// From brokers only: Alter (quietly) or ClusterAction on the cluster
	// (Kafka's checks), else CLUSTER_AUTHORIZATION_FAILED everywhere.
	clusterOK := b.authorizeQuiet(rc, acl.OpAlter, acl.ResourceCluster, acl.ClusterName) || b.authorizeCluster(rc, acl.OpClusterAction)
	now := time.Now().UnixMilli()
	var pending []pendingMarker
	for mi := range req.Markers {
		m := &req.Markers[mi]
		rm := &resp.Markers[mi]
		*rm = kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		rm.Topics = make([]kmsg.WriteTxnMarkersResponseMarkerTopic, len(m.Topics))
		for ti := range m.Topics {
			rt := &m.Topics[ti]
			st := &rm.Topics[ti]
			*st = kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			st.Topic = rt.Topic
			st.Partitions = make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, len(rt.Partitions))
			for pi, p := range rt.Partitions {
				sp := &st.Partitions[pi]
				*sp = kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				sp.Partition = p
				if !clusterOK {
					sp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
					continue
				}
				tp := storage.TopicPartition{Topic: rt.Topic, Partition: p}
				msg, err := prepareMarker(b, m, tp, now)
				if err != nil {
					sp.ErrorCode = err.Code
					continue
				}
				h, _ := b.Replicas.Get(tp)
				reply := make(chan partition.ProduceResult, 1)
				msg.Reply, msg.CorrelationID = reply, rc.CorrelationID
				h.Produce(msg)
				pending = append(pending, pendingMarker{out: sp, tp: tp, marker: m, msg: msg, reply: reply})
			}
		}
	}
	if len(pending) == 0 {
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.later(func() wire.Response {
		waitMarkers(b, rc, pending, markerRequestTimeout)
		return wire.Response{Msg: resp}
	})
}

// prepareMarker builds the control batch of marker m for tp, or returns
// the partition's error.
func prepareMarker(b *Broker, m *kmsg.WriteTxnMarkersRequestMarker, tp storage.TopicPartition, now int64) (*partition.Produce, *kerr.Error) {
	h, ok := b.Replicas.Get(tp)
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	v := h.View()
	if v.Err == kerr.KafkaStorageError {
		return nil, kerr.UnknownTopicOrPartition
	}
	if v.Err != nil {
		return nil, v.Err
	}
	if !v.IsLeader() {
		return nil, kerr.NotLeaderForPartition
	}
	batch, err := record.BuildBatch(record.BatchOptions{
		PartitionLeaderEpoch: -1, BaseTimestamp: now, Control: true, Transactional: true,
		Producer: &record.Producer{ID: m.ProducerID, Epoch: m.ProducerEpoch, BaseSequence: record.NoSequence},
	}, []record.BatchRecord{record.EndTxnMarker(m.Committed, m.CoordinatorEpoch)})
	if err != nil {
		return nil, kerr.UnknownServerError
	}
	hdr, err := record.ParseHeader(batch)
	if err != nil {
		return nil, kerr.UnknownServerError
	}
	typ := record.ControlAbort
	if m.Committed {
		typ = record.ControlCommit
	}
	return &partition.Produce{
		Batch: batch, Header: hdr, Acks: -1, LogAppendTime: v.Log.Config().LogAppendTime,
		Marker: &record.EndTxn{Type: typ, CoordinatorEpoch: m.CoordinatorEpoch},
	}, nil
}

// waitMarkers collects the appends' results (as waitProduce does, bounded
// by timeout and the connection's life) and reports the successful
// __consumer_offsets markers to the group coordinator.
func waitMarkers(b *Broker, rc *wire.RequestContext, pending []pendingMarker, timeout time.Duration) {
	var done <-chan struct{}
	if rc.Ctx != nil {
		done = rc.Ctx.Done()
	}
	deadline := partition.NewDeadline(timeout, done)
	defer deadline.Stop()
	gc, _ := b.Groups.(GroupTxnCompleter)
	for _, pm := range pending {
		r := deadline.Result(pm.msg, pm.reply)
		if r.Err != nil {
			pm.out.ErrorCode = r.Err.Code
			continue
		}
		if gc != nil && pm.tp.Topic == offsetsTopicName {
			gc.CompleteTxnOffsets(pm.tp.Partition, pm.marker.ProducerID, pm.marker.ProducerEpoch, pm.marker.Committed)
		}
	}
}
