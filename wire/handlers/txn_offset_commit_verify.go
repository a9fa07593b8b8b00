package handlers

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/wire"
)

// KIP-890 part 1 for TxnOffsetCommit (Kafka 3.6+: GroupCoordinator
// .handleTxnCommitOffsets verifying through ReplicaManager
// .maybeStartTransactionVerificationForPartition, then storeOffsets with
// the verification guard). On the request's later goroutine: the group's
// __consumer_offsets partition starts a verification for the producer
// (partition.Handle.StartTxnVerification: a guard, or none when the
// producer's transaction is already ongoing there), the transaction
// coordinator is asked through Broker.TxnVerifier whether that partition
// is in the transaction (AddOffsetsToTxn put it there), and the group
// coordinator gets the guard, which its append carries to the partition.
// A marker between the verification and the append voids the guard: the
// append is refused INVALID_TXN_STATE instead of opening a transaction the
// coordinator already ended.
//
// One divergence from Kafka's order: Kafka creates an unknown group
// (Empty) before verifying, here the group coordinator sees the request
// only once verified, so a refused commit leaves no new empty group.

// offsetsTopic is __consumer_offsets (coordinator.OffsetsTopicName).
const offsetsTopic = "__consumer_offsets"

// verifyTxnOffsetCommit verifies req's transaction on its group's
// partition and returns the guard for the group's append, or the code to
// answer every partition with (Kafka's codes: see txnOffsetCommitVerifyError).
func (b *Broker) verifyTxnOffsetCommit(rc *wire.RequestContext, req *kmsg.TxnOffsetCommitRequest) (guard uint64, code int16) {
	p := b.Groups.PartitionFor(req.Group)
	if b.Replicas == nil {
		return 0, txnOffsetCommitVerifyError(kerr.NotLeaderForPartition.Code, req.Version)
	}
	h, ok := b.Replicas.Get(storage.TopicPartition{Topic: offsetsTopic, Partition: p})
	if !ok {
		// Not hosted here: not this group's coordinator.
		return 0, txnOffsetCommitVerifyError(kerr.NotLeaderForPartition.Code, req.Version)
	}
	st := h.StartTxnVerification(reqCtx(rc), req.ProducerID, req.ProducerEpoch)
	if st.Err != nil {
		return 0, txnOffsetCommitVerifyError(st.Err.Code, req.Version)
	}
	if st.Guard == 0 {
		return 0, 0 // the transaction is ongoing on the partition already
	}
	codes := b.awaitVerification(rc, req.TransactionalID, req.ProducerID, req.ProducerEpoch, map[string][]int32{offsetsTopic: {p}})
	c, ok := codes[offsetsTopic][p]
	if !ok {
		c = kerr.NetworkException.Code
	}
	if c != 0 {
		return 0, txnOffsetCommitVerifyError(c, req.Version)
	}
	return st.Guard, 0
}

// txnOffsetCommitVerifyError is the TxnOffsetCommit code for a
// verification's code: TRANSACTION_ABORTABLE only from v4 (Kafka's
// genericError operation; older clients get INVALID_TXN_STATE), then
// Kafka's GroupMetadataManager.maybeConvertOffsetCommitError
// (NETWORK_EXCEPTION → COORDINATOR_LOAD_IN_PROGRESS, which clients retry
// without a coordinator lookup; UNKNOWN_TOPIC_OR_PARTITION and
// NOT_ENOUGH_REPLICAS(_AFTER_APPEND) → COORDINATOR_NOT_AVAILABLE;
// NOT_LEADER_OR_FOLLOWER and KAFKA_STORAGE_ERROR → NOT_COORDINATOR; the
// size errors → INVALID_COMMIT_OFFSET_SIZE; the rest as they are), and
// v0–v1 COORDINATOR_LOAD_IN_PROGRESS as COORDINATOR_NOT_AVAILABLE
// (KAFKA-7296).
func txnOffsetCommitVerifyError(code, version int16) int16 {
	if code == kerr.TransactionAbortable.Code && version < 4 {
		code = kerr.InvalidTxnState.Code
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
	if code == kerr.CoordinatorLoadInProgress.Code && version < 2 {
		code = kerr.CoordinatorNotAvailable.Code
	}
	return code
}

// fillTxnOffsetCommit is a coordinator response giving every partition of
// req code, in req's order.
func fillTxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest, code int16) *kmsg.TxnOffsetCommitResponse {
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
