package handlers

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TxnSource is the transaction coordinator as the transaction handlers
// (FindCoordinator key type TRANSACTION, InitProducerId with a
// transactional id, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn) see it.
// *txncoordinator.Coordinator (actors/txncoordinator) implements it.
//
// Every method must call reply exactly once, now or later and from any
// goroutine, and must not block: they run on the connection's reader
// goroutine. Codes are Kafka error codes as the coordinator decides them
// (PRODUCER_FENCED included); the handlers map them for old versions.
// Partitions are given by topic.
type TxnSource interface {
	// FindCoordinator answers a FindCoordinator request of key type 1.
	FindCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest, reply func(*kmsg.FindCoordinatorResponse))
	// InitProducerID: producerID/producerEpoch are -1 when the request
	// carries none (v0–v2, or a new producer); the reply's id and epoch
	// are -1 with a non-zero code.
	InitProducerID(transactionalID string, timeoutMs int32, producerID int64, producerEpoch int16, reply func(pid int64, epoch int16, code int16))
	// AddPartitions adds existing partitions to the producer's
	// transaction: one code for the whole transaction.
	AddPartitions(transactionalID string, producerID int64, producerEpoch int16, parts map[string][]int32, reply func(code int16))
	// VerifyPartitions (AddPartitionsToTxn v4+ VerifyOnly, KIP-890): a code
	// per partition, TRANSACTION_ABORTABLE for one not in the transaction.
	VerifyPartitions(transactionalID string, producerID int64, producerEpoch int16, parts map[string][]int32, reply func(map[string]map[int32]int16))
	// EndTxn commits or aborts the producer's transaction.
	EndTxn(transactionalID string, producerID int64, producerEpoch int16, commit bool, reply func(code int16))
	// DescribeTransaction answers one transactional id of
	// DescribeTransactions (its coordinator must be this broker).
	DescribeTransaction(transactionalID string, reply func(kmsg.DescribeTransactionsResponseTransactionState))
	// ListTransactions lists the transactional ids coordinated here,
	// filtered by state names (unknown ones returned), producer ids and
	// minimum running time (durationMs < 0: any).
	ListTransactions(states []string, producerIDs []int64, durationMs int64, reply func(code int16, unknownStates []string, listed []kmsg.ListTransactionsResponseTransactionState))
	// GroupPartition is the __consumer_offsets partition of group
	// (AddOffsetsToTxn adds it to the transaction).
	GroupPartition(group string) int32
}

// TxnVerifier asks a transactional id's coordinator, on whichever broker
// leads its __transaction_state partition, whether partitions are in the
// producer's ongoing transaction: KIP-890 part 1's verification, which
// Kafka's AddPartitionsToTxnManager sends as AddPartitionsToTxn v4 with
// VerifyOnly. reply gets a code per partition as the coordinator decides
// them (0, INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED,
// CONCURRENT_TRANSACTIONS, TRANSACTION_ABORTABLE for a partition not in
// the transaction, NOT_COORDINATOR…), or, with codes nil, one code for
// every partition: COORDINATOR_NOT_AVAILABLE when the coordinator has no
// leader, NETWORK_EXCEPTION when it could not be asked, or the response's
// top-level error. It must call reply exactly once, from any goroutine,
// and not block.
type TxnVerifier interface {
	VerifyTransaction(ctx context.Context, transactionalID string, producerID int64, producerEpoch int16, parts map[string][]int32, reply func(codes map[string]map[int32]int16, code int16))
}
