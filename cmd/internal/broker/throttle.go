package broker

import (
	"go.uber.org/zap"

	"gregor/replication/throttle"
)

// applyThrottledReplicas is the controller's Options.OnTopicConfig: the
// topic's leader./follower.replication.throttled.replicas as this
// broker's throttled partitions (Kafka's TopicConfigHandler).
func (b *Broker) applyThrottledReplicas(topic string, overrides map[string]string) {
	if err := b.quotas.ApplyTopicConfig(topic, overrides); err != nil {
		b.log.Error("invalid throttled replicas in topic config, throttle unchanged", zap.String("topic", topic), zap.Error(err))
	}
}

// ReplicationQuotas are the broker's replication quota managers, for the
// dynamic broker config layer to set their rates
// (leader.replication.throttled.rate → Leader.SetRate,
// follower.replication.throttled.rate → Follower.SetRate,
// replica.alter.log.dirs.io.max.bytes.per.second → AlterLogDirs.SetRate).
func (b *Broker) ReplicationQuotas() *throttle.Managers { return b.quotas }
