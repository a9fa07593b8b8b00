// Package txncoordinator is Gregor's transaction coordinator (KIP-98):
// InitProducerId with a transactional id, AddPartitionsToTxn (v4+ batched
// and VerifyOnly, KIP-890 part 1), AddOffsetsToTxn, EndTxn,
// DescribeTransactions and ListTransactions, with each transactional id's
// state in the compacted internal topic __transaction_state in Kafka's
// record format, and the WriteTxnMarkers requests that end a transaction
// on every partition it touched. Transactions older than their timeout
// are fenced and aborted; transactional ids idle longer than
// transactional.id.expiration.ms are removed with a tombstone.
//
// Layers, from the inside out:
//
//   - Metadata (state.go) is one transactional id's state and Kafka's
//     TransactionMetadata transitions (prepare, then complete once the
//     record is written; one pending at a time).
//   - Core (core.go) is the pure state of one loaded __transaction_state
//     partition and the decisions of Kafka's TransactionCoordinator in its
//     order of checks, the marker bookkeeping of its
//     TransactionMarkerChannelManager, and the timed-out abort. Its
//     effects (appends, marker sends, producer id allocations, delayed
//     retries) are taken by its owner and fed back through callbacks.
//   - records.go encodes and decodes TransactionLogKey v0 and
//     TransactionLogValue v0 (v1 read too) and folds a partition's
//     records (Loader).
//   - partActor (partition.go) is one protoactor actor per loaded
//     partition, "txn-coordinator/txn-<p>-<n>": it loads its partition
//     when it starts (COORDINATOR_LOAD_IN_PROGRESS meanwhile), answers
//     requests through its Core and performs the Core's effects on
//     goroutines it owns, whose outcomes come back as messages; the
//     records asked for while an append is in flight go out together as
//     the next batch. The manager actor "txn-coordinator"
//     (coordinator.go) keeps which partitions are loaded at which
//     coordinator epoch (the partition's leader epoch), spawns and
//     watches the partition actors and routes requests to them
//     (NOT_COORDINATOR for a partition not loaded here).
//
// The coordinator of a transactional id is the leader of partition
// abs(javaStringHashCode(id)) % transaction.state.log.num.partitions of
// __transaction_state (PartitionFor), the group coordinator's hash.
package txncoordinator
