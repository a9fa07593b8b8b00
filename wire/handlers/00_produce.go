package handlers

// Produce: v0-v11 (v0-v2 only with v2 record batches, see init)
//
// Behaviour:
//   - acks 0, 1 or -1 (all); anything else → INVALID_REQUIRED_ACKS on every
//     partition. With a sole ISR (single node) acks=-1 is satisfied as soon
//     as the leader appended; larger ISRs wait in the partition actor until
//     the high watermark passes the batch (every ISR member fetched it),
//     bounded by TimeoutMillis → REQUEST_TIMED_OUT (the record stays in the
//     leader's log, as in Kafka). min.insync.replicas (topic over broker):
//     acks=-1 with a smaller ISR → NOT_ENOUGH_REPLICAS before the append;
//     an ISR that shrank below it while waiting →
//     NOT_ENOUGH_REPLICAS_AFTER_APPEND. acks=0/1 ignore it.
//   - A follower or a stale leader (its LeaderAndIsr moved leadership
//     away) → NOT_LEADER_OR_FOLLOWER; pending acks=-1 produces fail the
//     same way when leadership moves.
//   - Per partition: not hosted here → UNKNOWN_TOPIC_OR_PARTITION; offline
//     → KAFKA_STORAGE_ERROR; stopping/restarting → NOT_LEADER_OR_FOLLOWER;
//     records larger than the topic's max.message.bytes → MESSAGE_TOO_LARGE.
//   - Validation runs here, on the connection goroutine, not in the actor
//     (so a partition's appends are not serialised behind validation):
//     record.Validate (CRC-32C, magic 2, header sanity) → CORRUPT_MESSAGE;
//     record.ValidateRecords (record framing, offset deltas, keys on
//     compacted topics; decompression bounded by maxUncompressed) →
//     INVALID_RECORD with ErrorMessage and, for a record at fault,
//     ErrorRecords (KIP-467, v8+). Not exactly one batch in the partition's
//     records → INVALID_RECORD (Kafka requires one v2 batch from v3 on).
//   - Internal topics (__consumer_offsets, __transaction_state): a client
//     other than __admin_client gets INVALID_TOPIC_EXCEPTION "Cannot append
//     to internal topic …" on a hosted partition (Kafka's appendToLocalLog).
//   - Transactions (KIP-98): a request holding a transactional batch
//     without a TransactionID → TRANSACTIONAL_ID_AUTHORIZATION_FAILED on
//     every partition (Kafka's handleProduceRequest answers the whole
//     request so). Transactional batches are checked in the partition
//     actor (partition.Producers): epoch fencing, sequences as for
//     idempotence, a non-transactional batch of a producer with a
//     transaction open → INVALID_TXN_STATE; the first transactional batch
//     opens the producer's transaction on the partition, which holds the
//     last stable offset back until its marker (WriteTxnMarkers).
//     Transactional batches of more than one producer id (or epoch) in
//     one request → INVALID_PRODUCER_ID_MAPPING on every partition.
//   - KIP-890 part 1 (transaction.partition.verification.enable, default
//     true): the first transactional batch of a transaction on a partition
//     is appended only once the transaction coordinator confirms the
//     partition is in the transaction (produce_verify.go): a partition
//     never added → INVALID_TXN_STATE ("Partition was not added to the
//     transaction"; v11+ TRANSACTION_ABORTABLE as the coordinator answers
//     it), a fenced producer → INVALID_PRODUCER_EPOCH, a coordinator that
//     cannot answer (CONCURRENT_TRANSACTIONS, NETWORK_EXCEPTION,
//     COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
//     NOT_COORDINATOR) → NOT_ENOUGH_REPLICAS, retriable without a metadata
//     refresh, as Kafka's ReplicaManager maps them. A transaction marker
//     written between the verification and the append voids it
//     (INVALID_TXN_STATE). Control batches
//     from clients → INVALID_RECORD, and so is a batch with a producer id
//     and base sequence -1 (record.Validate, Kafka's LogValidator): only
//     a coordinator writes those (partition.IsCoordinatorBatch).
//   - Idempotent producers: sequence/epoch checks in the partition actor
//     (partition.Producers): duplicates answered with their original
//     offset, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH.
//   - Each partition's batch goes to its partition actor in request order
//     (the batch aliases the request buffer: no copy). The response waits
//     for every partition, bounded by TimeoutMillis: partitions the actor
//     has not started by then get REQUEST_TIMED_OUT and are never appended;
//     one already being appended is waited for (its bytes are still read).
//   - acks=0: no response is sent, but only after the actors are done with
//     the request buffer; when any partition failed, the connection is
//     closed instead (logged), as Kafka does, so the producer notices.
//   - Record-level rules, timestamps, LogAppendTime stamping and
//     compression.type recompression: validateProduceBatch
//     (produce_validate.go). LogAppendTime is -1 on CreateTime topics.
//
// Version notes:
//   - v0-v2: accepted with one v2 record batch (magic 2) per partition;
//     message sets (magic 0/1) → UNSUPPORTED_FOR_MESSAGE_FORMAT. v1:
//     ThrottleMillis; v2: LogAppendTime in the response.
//   - v3: transactional id; exactly one v2 batch per partition.
//   - v4: KAFKA_STORAGE_ERROR may be returned.
//   - v5: LogStartOffset in the response.
//   - v6, v7: same as v5 (v7: ZStandard allowed).
//   - v8: ErrorRecords and ErrorMessage (KIP-467).
//   - v9: flexible versions.
//   - v10, v11: same as v9 (KIP-951 CurrentLeader/NodeEndpoints tagged
//     fields left empty; v11 adds TRANSACTION_ABORTABLE, which only the
//     KIP-890 verification answers; below v11 it is INVALID_TXN_STATE).

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/partition"
	"gregor/replication/metadata"
	"gregor/storage"
	"gregor/storage/record"
	"gregor/wire"
	"gregor/wire/security/acl"
)

// v0-v2 are advertised (as Kafka 3 does) because librdkafka before 2.10
// compresses with gzip, snappy or lz4 only when the broker lists Produce v0
// (it then sends v7+); a v0-v2 request must still carry magic-2 batches,
// else UNSUPPORTED_FOR_MESSAGE_FORMAT (produce_validate.go).
func init() { register(0, 0, 11, handleProduce) }

// adminClientID is the client id allowed to produce to internal topics
// (Kafka's AdminUtils.ADMIN_CLIENT_ID: internalTopicsAllowed); any other
// client gets INVALID_TOPIC_EXCEPTION, as Kafka's appendToLocalLog answers,
// so no client can forge coordinator state.
const adminClientID = "__admin_client"

// maxUncompressed bounds how much a compressed batch may inflate during
// validation: 32× max.message.bytes, at least 64 MiB. Kafka does not bound
// it; we do, so a compression bomb costs a CORRUPT_MESSAGE, not the heap.
func maxUncompressed(maxMessageBytes int32) int {
	return max(64<<20, 32*int(maxMessageBytes))
}

type pendingProduce struct {
	p     *kmsg.ProduceResponseTopicPartition
	tp    storage.TopicPartition
	msg   *partition.Produce
	reply chan partition.ProduceResult
	guard uint64 // KIP-890: the verification guard the actor answered (produce_verify.go)
}

func handleProduce(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	var pending []pendingProduce
	// Transactional records need Write on the transactional id, every
	// topic Write (Kafka's checks, before anything else).
	txnDenied := req.TransactionID == nil && hasTransactionalRecords(req) ||
		req.TransactionID != nil && b.Authorizer != nil && hasTransactionalRecords(req) &&
			!b.authorize(rc, acl.OpWrite, acl.ResourceTransactionalID, *req.TransactionID)
	writable := filterAuthorized(b, rc, acl.OpWrite, acl.ResourceTopic, req.Topics, func(t kmsg.ProduceRequestTopic) string { return t.Topic })
	pidMismatch := req.TransactionID != nil && !oneTransactionalProducer(req)
	verify := b.TxnVerifier != nil && req.TransactionID != nil
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	var order *turn
	if verify && !txnDenied && !pidMismatch {
		if pid, ok := transactionalProducer(req); ok {
			// Taken before any batch goes to a partition, in the
			// connection's order (produce_verify_order.go).
			order = b.txnOrder.take(pid)
		}
	}
	for ti, rt := range req.Topics {
		for pi, rp := range rt.Partitions {
			sp := &resp.Topics[ti].Partitions[pi]
			if txnDenied {
				setProduceError(sp, req.Version, kerr.TransactionalIDAuthorizationFailed, "transactional records need the request's transactional id", nil)
				continue
			}
			if pidMismatch {
				setProduceError(sp, req.Version, kerr.InvalidProducerIDMapping, "Transactional records contained more than one producer ID", nil)
				continue
			}
			if !allowed(writable, rt.Topic) {
				setProduceError(sp, req.Version, kerr.TopicAuthorizationFailed, "", nil)
				continue
			}
			tp := storage.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			if metadata.IsInternal(tp.Topic) && rc.ClientID != adminClientID {
				if _, hosted := b.Replicas.Get(tp); hosted {
					setProduceError(sp, req.Version, kerr.InvalidTopicException, "Cannot append to internal topic "+tp.Topic, nil)
					continue
				}
			}
			msg, err, detail, recErrs := prepareProduce(b, req, tp, rp.Records)
			if err != nil {
				setProduceError(sp, req.Version, err, detail, recErrs)
				continue
			}
			h, _ := b.Replicas.Get(tp)
			reply := make(chan partition.ProduceResult, 1)
			msg.Reply, msg.CorrelationID, msg.TxnVerify = reply, rc.CorrelationID, verify
			h.Produce(msg)
			pending = append(pending, pendingProduce{p: sp, tp: tp, msg: msg, reply: reply})
		}
	}
	none := req.Acks == 0
	if len(pending) == 0 {
		order.done()
		return wire.Now(acksZero(b, rc, resp, none))
	}
	return b.later(func() wire.Response { // ends with rc.Ctx, cancelled by the server's Close before the handlers' Close
		defer order.done()
		timeout := time.Duration(max(req.TimeoutMillis, 0)) * time.Millisecond
		if unverified := waitProduce(rc, pending, req.Version, timeout); len(unverified) > 0 {
			b.verifyProduce(rc, req, unverified, timeout, order)
		}
		order.done()
		return acksZero(b, rc, resp, none)
	})
}

// acksZero is the reply to a Produce: resp, or with acks=0 nothing at all
// and, when any partition failed, the connection closed so the producer
// learns of the error and refreshes its metadata (Kafka's
// handleProduceRequest: "Closing connection due to error during produce
// request ... with ack=0").
func acksZero(b *Broker, rc *wire.RequestContext, resp *kmsg.ProduceResponse, none bool) wire.Response {
	if !none {
		return wire.Response{Msg: resp}
	}
	var failed []string
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				failed = append(failed, fmt.Sprintf("%s-%d: %s", t.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode)))
			}
		}
	}
	if len(failed) == 0 {
		return wire.Response{None: true}
	}
	b.Log.Info("Closing connection due to error during produce request with ack=0",
		zap.Int32("correlation_id", rc.CorrelationID), zap.String("client_id", rc.ClientID), zap.Strings("partitions", failed))
	return wire.Response{None: true, CloseConn: true}
}

// prepareProduce validates one partition's records and builds its Produce
// message, or returns the error to answer (with detail and the records at
// fault, KIP-467).
func prepareProduce(b *Broker, req *kmsg.ProduceRequest, tp storage.TopicPartition, records []byte) (*partition.Produce, *kerr.Error, string, []record.RecordError) {
	if req.Acks != 0 && req.Acks != 1 && req.Acks != -1 {
		return nil, kerr.InvalidRequiredAcks, "", nil
	}
	h, ok := b.Replicas.Get(tp)
	if !ok {
		return nil, notHosted(b, tp), "", nil
	}
	v := h.View()
	if v.Err != nil {
		return nil, v.Err, "", nil
	}
	if !v.IsLeader() {
		return nil, kerr.NotLeaderForPartition, "", nil
	}
	cfg := v.Log.Config()
	if len(records) > int(cfg.MaxMessageBytes) {
		return nil, kerr.MessageTooLarge, "", nil
	}
	vb, rej := validateProduceBatch(cfg, req.Version, records, time.Now().UnixMilli())
	if rej != nil {
		return nil, rej.err, rej.detail, rej.records
	}
	return &partition.Produce{Batch: vb.batch, Header: vb.hdr, Acks: req.Acks, LogAppendTime: vb.logAppendTime}, nil, "", nil
}

// hasTransactionalRecords reports whether any partition's records start
// with a v2 batch carrying the transactional attribute (Kafka's
// RequestUtils.hasTransactionalRecords; a v3+ partition holds one batch,
// and anything else, old message formats included, is refused per
// partition anyway).
func hasTransactionalRecords(req *kmsg.ProduceRequest) bool {
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			if r := rp.Records; len(r) > record.OffAttributes+1 && r[record.OffMagic] == 2 && r[record.OffAttributes+1]&record.AttrTransactional != 0 {
				return true
			}
		}
	}
	return false
}

func setProduceError(sp *kmsg.ProduceResponseTopicPartition, version int16, err *kerr.Error, detail string, recErrs []record.RecordError) {
	sp.ErrorCode = err.Code
	sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
	if version < 8 {
		return
	}
	if detail != "" {
		sp.ErrorMessage = &detail
	}
	if len(recErrs) > 0 {
		sp.ErrorRecords = make([]kmsg.ProduceResponseTopicPartitionErrorRecord, 0, len(recErrs))
	}
	for i := range recErrs {
		er := kmsg.NewProduceResponseTopicPartitionErrorRecord()
		er.RelativeOffset = int32(recErrs[i].Index)
		er.ErrorMessage = &recErrs[i].Message
		sp.ErrorRecords = append(sp.ErrorRecords, er)
	}
}

// waitProduce collects the actors' replies, bounded by timeout (and the
// connection's life). Once the wait has run out each remaining partition
// is settled with partition.SettleExpired: one the actor has not started
// is abandoned (REQUEST_TIMED_OUT), one it is appending is waited for.
// It returns the partitions whose actor answered that the batch must be
// verified with the transaction coordinator first (KIP-890,
// ProduceResult.VerifyGuard), their responses not yet set.
func waitProduce(rc *wire.RequestContext, pending []pendingProduce, version int16, timeout time.Duration) (unverified []pendingProduce) {
	var done <-chan struct{}
	if rc.Ctx != nil {
		done = rc.Ctx.Done()
	}
	deadline := partition.NewDeadline(timeout, done)
	defer deadline.Stop()
	for _, pp := range pending {
		r := deadline.Result(pp.msg, pp.reply)
		if r.VerifyGuard != 0 {
			pp.guard = r.VerifyGuard
			unverified = append(unverified, pp)
			continue
		}
		if r.Err != nil {
			setProduceError(pp.p, version, r.Err, r.ErrorMessage, nil)
			continue
		}
		pp.p.ErrorCode = 0
		pp.p.BaseOffset, pp.p.LogAppendTime, pp.p.LogStartOffset = r.BaseOffset, r.LogAppendTime, r.LogStartOffset
	}
	return unverified
}
