package handlers

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage"
)

// notHosted is the error for a request on a partition this broker does
// not host (Kafka's ReplicaManager.getPartitionOrError):
// NOT_LEADER_OR_FOLLOWER when the metadata cache knows the partition —
// this broker was named its leader by metadata it has not caught up with
// yet (a restarted broker between UpdateMetadata and its LeaderAndIsr, or
// a client holding another broker's stale metadata); the error is
// retriable without limit and makes the client refresh its metadata —
// else UNKNOWN_TOPIC_OR_PARTITION, which clients retry only a few times
// (franz-go: UnknownTopicRetries, 4) before failing every buffered record.
func notHosted(b *Broker, tp storage.TopicPartition) *kerr.Error {
	if b.Topics != nil {
		if s := b.Topics.Snapshot(); s != nil {
			if _, ok := s.Partition(tp.Topic, tp.Partition); ok {
				return kerr.NotLeaderForPartition
			}
		}
	}
	return kerr.UnknownTopicOrPartition
}
