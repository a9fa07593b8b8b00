// Package coordinator is Gregor's group coordinator: Kafka's classic consumer
// group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
// OffsetFetch, OffsetDelete, DescribeGroups, ListGroups, DeleteGroups,
// TxnOffsetCommit) with groups and committed offsets stored in the
// compacted internal topic __consumer_offsets in Kafka's own record formats.
//
// Layers, from the inside out:
//
//   - Group (group.go, join.go, sync.go, heartbeat.go, offsets.go,
//     describe.go) is the pure per-group state machine of Kafka's
//     GroupCoordinator/GroupMetadata: states Empty, PreparingRebalance,
//     CompletingRebalance, Stable and Dead. It has no goroutines, timers or
//     actors: every call takes the current time, deferred JoinGroup and
//     SyncGroup answers are callbacks, timeouts fire when the owner calls
//     Tick(now) at NextDeadline(), and persistence is an effect: the group
//     asks for records to be appended with what to do with the outcome
//     (write, publish.go), performed at once with its Store or, when its
//     owner defers writes, queued in its outbox for the owner.
//   - records.go encodes and decodes the __consumer_offsets records
//     (OffsetCommitKey/Value, GroupMetadataKey/Value, see kmsg) and load.go
//     rebuilds groups from a partition's records.
//   - groupActor (group_actor.go) is one protoactor actor per group, owning
//     one Group; Coordinator (coordinator.go) is the group-coordinator
//     router actor that routes requests to group actors (root actors it
//     spawns and watches, so its restart stops none of them), loads
//     __consumer_offsets partitions, and answers NOT_COORDINATOR /
//     COORDINATOR_LOAD_IN_PROGRESS. Requests come in over channels (never
//     RequestFuture: about 5 µs and 11 allocations a call in protoactor-go).
//     A group actor publishes
//     what a message changed (the group's ListGroups entry; a Dead group
//     is forgotten) before it releases that message's answers
//     (publish.go), so no client sees a state older than its answer. It
//     performs the group's appends to __consumer_offsets on a goroutine
//     of its own, one at a time, and feeds each outcome back as a
//     message: a commit, a rejoin or a SyncGroup waiting for acks=-1
//     replication holds no heartbeat, leave or session timer of its group.
//     An append outlives the group that asked for it when the group is
//     deleted and forgotten meanwhile: its outcome still answers its
//     request, but the group's incarnation (counted by forget, captured
//     by the write's callback) keeps it from changing the new group of the
//     same id. Tombstones of a deletion (DeleteGroups, OffsetDelete,
//     offset expiry, deleted topics) are best-effort, as Kafka's acks=0
//     cleanup appends: the request is answered once the cache is updated
//     and a failed append is only logged.
//     The broker's OffsetsTopic waits on each append with
//     partition.ProduceWait, the one wait on a partition.Produce (abandon
//     before the actor starts it, give up after it appended).
//
// Transactional offset commits (TxnOffsetCommit, KIP-98 / KIP-447; txn.go)
// are appended as transactional batches of the producer and held per
// producer id as pending until the transaction's marker in the same
// __consumer_offsets partition: the partition's WriteTxnMarkers handler
// calls CompleteTxnOffsets, which the router sends to the groups that may
// hold that producer's offsets (an index it keeps per partition, filled by
// loads and by routing TxnOffsetCommit). Loading folds the markers found
// in the log the same way (load.go).
//
// The coordinator of a group is the leader of partition
// abs(javaStringHashCode(group)) % offsets.topic.num.partitions of
// __consumer_offsets (PartitionFor), so the same code serves a single node
// and a cluster: the broker learns which partitions it leads through the
// OffsetsTopic interface.
package coordinator
