package zkclient

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/partition"
	"gregor/replication/zkmeta"
)

// AlterIsr implements partition.IsrWriter the Kafka 2.x ZooKeeper way
// (Partition.shrinkIsr/expandIsr → KafkaZkClient.conditionalUpdatePath):
// a conditional write of /brokers/topics/<t>/partitions/<p>/state (leader
// = this broker) on zkVersion, then an /isr_change_notification/isr_change_
// sequential entry for the controller. It returns the znode's new version.
// Errors: the leader or leader epoch in ZooKeeper is not this broker's
// (wraps kerr.FencedLeaderEpoch); a version conflict (wraps
// metastore.ErrBadVersion: the controller changed the state, and its next
// LeaderAndIsr says how); a store failure. A failed notification after a
// written state is only logged: the controller reads the state anyway on
// its next event for the partition.
func (c *Client) AlterIsr(tp partition.TopicPartition, leaderEpoch int32, newIsr []int32, zkVersion int32) (int32, error) {
	path := zkmeta.PartitionStatePath(tp.Topic, tp.Partition)
	data, _, err := c.store.Get(path)
	if err != nil {
		return 0, fmt.Errorf("zkclient: alter ISR of %s: %w", tp, err)
	}
	cur, err := zkmeta.DecodePartitionState(data)
	if err != nil {
		return 0, err
	}
	if cur.LeaderEpoch != leaderEpoch || cur.Leader != c.brokerID {
		return 0, fmt.Errorf("zkclient: alter ISR of %s: leader %d epoch %d in ZooKeeper, this broker holds epoch %d: %w",
			tp, cur.Leader, cur.LeaderEpoch, leaderEpoch, kerr.FencedLeaderEpoch)
	}
	next := zkmeta.PartitionState{ControllerEpoch: cur.ControllerEpoch, Leader: c.brokerID, LeaderEpoch: leaderEpoch, ISR: append([]int32{}, newIsr...)}
	v, err := c.store.Set(path, next.Encode(), zkVersion)
	if err != nil {
		return 0, fmt.Errorf("zkclient: alter ISR of %s at version %d: %w", tp, zkVersion, err)
	}
	note := zkmeta.EncodeIsrChange([]zkmeta.IsrChangePartition{{Topic: tp.Topic, Partition: tp.Partition}})
	if _, err := c.store.CreateSequential(zkmeta.IsrChangePrefix, note, false); err != nil {
		c.log.Warn("ISR change notification failed", zap.Stringer("partition", tp), zap.Error(err))
	}
	c.log.Info("ISR changed", zap.Stringer("partition", tp), zap.Int32("leader.epoch", leaderEpoch), zap.Any("isr", newIsr), zap.Int32("zk.version", v))
	return v, nil
}
