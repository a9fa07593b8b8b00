package handlers

// TxnOffsetCommit: v0-4
//
// Behaviour (Kafka's KafkaApis.handleTxnOffsetCommitRequest and
// GroupCoordinator.handleTxnCommitOffsets, KIP-98 / KIP-447):
//   - Partitions of topics (or partition numbers) the cluster metadata does
//     not have get UNKNOWN_TOPIC_OR_PARTITION here; the rest go to the
//     group coordinator (GroupSource.TxnOffsetCommit).
//   - The coordinator checks the group (INVALID_GROUP_ID for "",
//     NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, then for v3+ requests
//     that name a member or generation UNKNOWN_MEMBER_ID,
//     FENCED_INSTANCE_ID, ILLEGAL_GENERATION; an unknown group is created
//     Empty), appends the offsets to __consumer_offsets in a
//     transactional batch of the producer and answers once the append is
//     done. The offsets stay pending (OffsetFetch shows the previous
//     commit; require_stable answers UNSTABLE_OFFSET_COMMIT) until the
//     transaction's COMMIT marker makes them the committed offsets (the
//     ABORT marker drops them).
//   - OFFSET_METADATA_TOO_LARGE per partition beyond
//     offset.metadata.max.bytes.
//
//   - KIP-890 part 1 (transaction.partition.verification.enable, default
//     true): when this broker leads the group's __consumer_offsets
//     partition, the transaction is first verified with its coordinator
//     (Broker.TxnVerifier, replication/txnverify: AddPartitionsToTxn v4 VerifyOnly for that
//     partition), as Kafka's GroupCoordinator.handleTxnCommitOffsets
//     does: a producer id that is not the transactional id's
//     (INVALID_PRODUCER_ID_MAPPING), an old epoch (PRODUCER_FENCED, answered
//     INVALID_PRODUCER_EPOCH), a transaction completing
//     (CONCURRENT_TRANSACTIONS) or one the partition was not added to
//     (AddOffsetsToTxn not sent: TRANSACTION_ABORTABLE, answered
//     INVALID_TXN_STATE below v4) fail every partition and nothing is
//     appended; a coordinator that could not be asked answers
//     COORDINATOR_LOAD_IN_PROGRESS (Kafka's NETWORK_EXCEPTION, converted
//     by maybeConvertOffsetCommitError). When the group is coordinated
//     elsewhere the coordinator's own answer (NOT_COORDINATOR…) comes
//     first, unverified.
//
// Version notes: v1 same as v0; v2 LeaderEpoch; v3 flexible, Generation,
// MemberID, InstanceID (KIP-447); v4 answers TRANSACTION_ABORTABLE from
// the verification above. v0–v1 answer COORDINATOR_LOAD_IN_PROGRESS as
// COORDINATOR_NOT_AVAILABLE (KAFKA-7296).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metadata"
	"gregor/wire"
)

func init() { register(28, 0, 4, handleTxnOffsetCommit) }

func handleTxnOffsetCommit(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	// known says whether each requested partition exists in the cluster
	// metadata; the coordinator sees only those that do.
	known := make([][]bool, len(req.Topics))
	fwd := *req
	fwd.Topics = nil
	var snap *metadata.Snapshot
	if b.Topics != nil {
		snap = b.Topics.Snapshot()
	}
	for ti, t := range req.Topics {
		known[ti] = make([]bool, len(t.Partitions))
		var ft *kmsg.TxnOffsetCommitRequestTopic
		for pi, p := range t.Partitions {
			if snap != nil {
				if _, ok := snap.Partition(t.Topic, p.Partition); !ok {
					continue
				}
			}
			known[ti][pi] = true
			if ft == nil {
				fwd.Topics = append(fwd.Topics, kmsg.TxnOffsetCommitRequestTopic{Topic: t.Topic})
				ft = &fwd.Topics[len(fwd.Topics)-1]
			}
			ft.Partitions = append(ft.Partitions, p)
		}
	}
	merge := func(coord *kmsg.TxnOffsetCommitResponse) *kmsg.TxnOffsetCommitResponse {
		resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		// The coordinator answers fwd's partitions in fwd's order.
		var got []int16
		if coord != nil {
			resp.ThrottleMillis = coord.ThrottleMillis
			for _, t := range coord.Topics {
				for _, p := range t.Partitions {
					got = append(got, p.ErrorCode)
				}
			}
		}
		i := 0
		for ti, t := range req.Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for pi, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition = p.Partition
				switch {
				case !known[ti][pi]:
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				case coord == nil:
					rp.ErrorCode = noCoordinator
				case i < len(got):
					rp.ErrorCode = got[i]
					i++
				default:
					rp.ErrorCode = kerr.UnknownServerError.Code
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	if len(fwd.Topics) == 0 {
		// Nothing for the coordinator (Kafka answers without asking it).
		r := merge(kmsg.NewPtrTxnOffsetCommitResponse())
		return wire.Now(wire.Response{Msg: r})
	}
	if b.Groups == nil {
		return wire.Now(wire.Response{Msg: merge(nil)})
	}
	ch := make(chan wire.Response, 1)
	commit := func() {
		b.Groups.TxnOffsetCommit(reqCtx(rc), &fwd, func(r *kmsg.TxnOffsetCommitResponse) {
			ch <- wire.Response{Msg: merge(r)}
		})
	}
	gp, verify := b.verifiesTxnOffsetCommit(snap, req)
	if !verify {
		commit()
		return wire.Later(ch)
	}
	b.TxnVerifier.Verify(req.TransactionalID, req.ProducerID, req.ProducerEpoch,
		map[string][]int32{offsetsTopicName: {gp}}, func(codes map[string]map[int32]int16) {
			code := codes[offsetsTopicName][gp]
			if code = txnOffsetVerifyCode(req.Version, code); code != 0 {
				ch <- wire.Response{Msg: merge(allPartitions(&fwd, code))}
				return
			}
			commit()
		})
	return wire.Later(ch)
}

// verifiesTxnOffsetCommit reports whether req's transaction is verified
// before its offsets are appended, and the group's __consumer_offsets
// partition: verification is on, there is a verifier, and this broker
// leads that partition (otherwise the group coordinator answers
// NOT_COORDINATOR, or INVALID_GROUP_ID for "", before any verification,
// in Kafka's order).
func (b *Broker) verifiesTxnOffsetCommit(snap *metadata.Snapshot, req *kmsg.TxnOffsetCommitRequest) (int32, bool) {
	if b.TxnVerifier == nil || b.Txns == nil || b.Config == nil || !b.Config.TransactionPartitionVerificationEnable || req.Group == "" || snap == nil {
		return 0, false
	}
	gp := b.Txns.GroupPartition(req.Group)
	p, ok := snap.Partition(offsetsTopicName, gp)
	return gp, ok && p.Leader == b.Config.BrokerID
}

// allPartitions is a coordinator answer giving code to every partition of
// req, in req's order.
func allPartitions(req *kmsg.TxnOffsetCommitRequest, code int16) *kmsg.TxnOffsetCommitResponse {
	resp := kmsg.NewPtrTxnOffsetCommitResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// txnOffsetVerifyCode maps a verification answer to what a TxnOffsetCommit
// of version v answers: Kafka's AddPartitionsToTxnManager (PRODUCER_FENCED
// → INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE → INVALID_TXN_STATE for
// clients below v4), then GroupMetadataManager.maybeConvertOffsetCommitError,
// then KafkaApis' v0–v1 COORDINATOR_LOAD_IN_PROGRESS rewrite.
func txnOffsetVerifyCode(v int16, code int16) int16 {
	switch code {
	case kerr.ProducerFenced.Code:
		code = kerr.InvalidProducerEpoch.Code
	case kerr.TransactionAbortable.Code:
		if v < 4 {
			code = kerr.InvalidTxnState.Code
		}
	}
	switch code {
	case kerr.NetworkException.Code:
		code = kerr.CoordinatorLoadInProgress.Code
	case kerr.UnknownTopicOrPartition.Code, kerr.NotEnoughReplicas.Code, kerr.NotEnoughReplicasAfterAppend.Code:
		code = kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code:
		code = kerr.NotCoordinator.Code
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code, kerr.InvalidFetchSize.Code:
		code = kerr.InvalidCommitOffsetSize.Code
	}
	if v < 2 && code == kerr.CoordinatorLoadInProgress.Code {
		code = kerr.CoordinatorNotAvailable.Code
	}
	return code
}
