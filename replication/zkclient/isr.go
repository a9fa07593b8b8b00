package zkclient

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/partition"
	"gregor/replication/metastore"
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
// LeaderAndIsr says how); a store failure. A version conflict is first
// checked against the znode, as Kafka's conditionalUpdatePath does with
// ReplicationUtils.checkLeaderAndIsrZkData: when it already holds exactly
// this write (leader, leader epoch, ISR and controller epoch) — an earlier
// attempt landed but its answer was lost — AlterIsr succeeds with the
// znode's current version. A failed notification after a
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
	if errors.Is(err, metastore.ErrBadVersion) {
		if cv, ok := c.holds(path, next); ok {
			v, err = cv, nil
		}
	}
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

// holds re-reads the partition state znode at path and reports its
// version when it holds exactly want (a conditional write that already
// landed); any read or decode failure is "no".
func (c *Client) holds(path string, want zkmeta.PartitionState) (int32, bool) {
	data, v, err := c.store.Get(path)
	if err != nil {
		return 0, false
	}
	cur, err := zkmeta.DecodePartitionState(data)
	if err != nil {
		return 0, false
	}
	same := cur.Leader == want.Leader && cur.LeaderEpoch == want.LeaderEpoch &&
		cur.ControllerEpoch == want.ControllerEpoch && slices.Equal(cur.ISR, want.ISR)
	return v, same
}
