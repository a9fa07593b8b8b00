package partition

// Contracts between the partition actors and the rest of replication
// (issue 6, cluster mode). The controller side implements IsrWriter and
// EndpointLookup; replication/fetcher implements FetcherControl.

// IsrWriter persists an ISR change decided by a partition leader: it
// shrinks the ISR when a follower has not caught up for
// replica.lag.time.max.ms and expands it when a follower reaches the high
// watermark. Kafka 2.x (ZooKeeper mode, before KIP-497 AlterPartition)
// writes /brokers/topics/<t>/partitions/<p>/state conditionally on the
// znode's version and adds an /isr_change_notification/isr_change_<seq>
// entry so the controller propagates the change with UpdateMetadata.
type IsrWriter interface {
	// AlterIsr writes {leader: this broker, leader_epoch: leaderEpoch, isr:
	// newIsr} for tp if the partition state znode still has version
	// zkVersion (the ZkVersion of the LeaderAndIsr the leader holds, or the
	// version a previous AlterIsr returned). It returns the znode's new
	// version. Any error (a version conflict because the controller changed
	// the state, a lost session, a fenced leader epoch) leaves the leader's
	// ISR unchanged: it retries on its next check, and a newer LeaderAndIsr
	// from the controller replaces its state. Must be safe for concurrent
	// use; called from partition actors, bounded by the store's timeouts.
	AlterIsr(tp TopicPartition, leaderEpoch int32, newIsr []int32, zkVersion int32) (newZkVersion int32, err error)
}

// EndpointLookup resolves a broker id to the address a follower fetcher
// connects to (the inter-broker listener of /brokers/ids/<id>, as the
// metadata cache learnt it from UpdateMetadata or ZooKeeper).
type EndpointLookup interface {
	// BrokerEndpoint returns the host and port of broker id; ok is false
	// when the broker is not known to be alive.
	BrokerEndpoint(id int32) (host string, port int32, ok bool)
}

// FetcherControl is the replica fetcher manager as the replica manager
// drives it (Kafka's ReplicaFetcherManager.addFetcherForPartitions /
// removeFetcherForPartitions). Implemented by replication/fetcher.
type FetcherControl interface {
	// Follow makes tp replicate from broker leader under leaderEpoch,
	// replacing any previous fetch of tp. The fetcher first truncates the
	// follower log with OffsetForLeaderEpoch (KIP-101/279), then fetches
	// from the log end offset. Non-blocking.
	Follow(tp TopicPartition, leader, leaderEpoch int32)
	// Unfollow stops fetching tps (they became leaders, stopped or were
	// deleted). When it returns no fetcher will append to them any more
	// under the old epoch (appends are also fenced by leader epoch).
	Unfollow(tps ...TopicPartition)
}
