package broker

import (
	"strconv"

	"gregor/actors/coordinator"
	"gregor/config"
	"gregor/partition"
	"gregor/replication/metadata"
)

// newOffsetsTopic is __consumer_offsets as Kafka creates it:
// offsets.topic.num.partitions partitions, offsets.topic.replication.factor
// replicas, compacted, offsets.topic.segment.bytes segments, the
// producer's compression kept.
func newOffsetsTopic(cfg *config.Broker) *internalTopic {
	return &internalTopic{cfg: cfg, spec: topicSpec{
		name:       coordinator.OffsetsTopicName,
		partitions: cfg.OffsetsTopicNumPartitions,
		rf:         cfg.OffsetsTopicReplicationFactor,
		rfKey:      "offsets.topic.replication.factor",
		configs: map[string]string{
			"cleanup.policy":   "compact",
			"segment.bytes":    strconv.FormatInt(cfg.OffsetsTopicSegmentBytes, 10),
			"compression.type": "producer",
		},
		loadBuffer: cfg.Coordinators.OffsetsLoadBufferSize,
		leaderAcks: cfg.Coordinators.OffsetCommitRequiredAcks == 0 || cfg.Coordinators.OffsetCommitRequiredAcks == 1,
	}}
}

// groupsLeadership is the replica manager's OnLeadershipChange: a
// __consumer_offsets partition led here loads its groups; one no longer
// led here resigns them (Kafka's onLeadershipChange callback of
// handleLeaderAndIsrRequest and StopReplica). The coordinator exists
// before the replica manager, so no change is lost; each one is a message
// to its router (it never blocks).
func groupsLeadership(c *coordinator.Coordinator) func(tp partition.TopicPartition, leader bool, leaderEpoch int32) {
	return func(tp partition.TopicPartition, leader bool, leaderEpoch int32) {
		if tp.Topic == coordinator.OffsetsTopicName {
			c.LeadershipChanged(tp.Partition, leader, leaderEpoch)
		}
	}
}

// groupsMetadata is the metadata cache's listener: offsets of topics the
// new snapshot no longer has are dropped from the groups coordinated here.
func groupsMetadata(c *coordinator.Coordinator) func(prev, next *metadata.Snapshot) {
	return func(prev, next *metadata.Snapshot) {
		if gone := deletedTopics(prev, next); len(gone) > 0 {
			c.DeleteTopicOffsets(gone)
		}
	}
}

// deletedTopics lists the topics of prev that next does not have, or has
// under another topic id (deleted and created again between the two).
// A next without live brokers is not a view of the cluster (a standby
// broker before its first UpdateMetadata): nothing is deleted then.
func deletedTopics(prev, next *metadata.Snapshot) []string {
	if prev == nil || next == nil || len(next.Brokers) == 0 {
		return nil
	}
	var gone []string
	for name, t := range prev.Topics {
		n, ok := next.Topics[name]
		if !ok || (t.ID != [16]byte{} && n.ID != [16]byte{} && t.ID != n.ID) {
			gone = append(gone, name)
		}
	}
	return gone
}
