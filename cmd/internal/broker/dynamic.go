package broker

import (
	"gregor/config"
	"gregor/config/dynamic"
)

// startDynamicConfig loads /config/brokers/<default> and /config/brokers/<id>
// over server.properties and starts the watcher that re-reads them on a
// /config/changes notification (the controller's
// Options.OnBrokerConfigChange). It returns the effective config the
// components start from. Stopped by Close.
func (b *Broker) startDynamicConfig() (*config.Broker, error) {
	b.dyn = dynamic.New(b.cfg, b.log.Named("dynamic-config"))
	if err := b.dyn.Load(b.store); err != nil {
		return nil, err
	}
	b.dynWatcher = dynamic.Watch(b.store, b.dyn, b.log.Named("dynamic-config"))
	b.closers = append(b.closers, func() error { b.dynWatcher.Close(); return nil })
	return b.dyn.Current(), nil
}

// registerDynamic registers the broker's reconfigurable components
// (Kafka's addReconfigurable calls). Other components register with one
// b.dyn.Register / RegisterFunc call.
func (b *Broker) registerDynamic() {
	// Replication throttle rates (Kafka's BrokerConfigHandler →
	// ReplicationQuotaManager.updateQuota).
	b.dyn.RegisterFunc("replication-quotas", config.ReplicationQuotaKeys, func(next *config.Broker) {
		q := next.Quotas
		b.quotas.Leader.SetRate(q.LeaderReplicationThrottledRate)
		b.quotas.Follower.SetRate(q.FollowerReplicationThrottledRate)
		b.quotas.AlterLogDirs.SetRate(q.ReplicaAlterLogDirsIOMaxBytesPerSecond)
	})
	// Topic defaults: partitions of topics without their own override
	// take the new default (controller.DefaultsChanged).
	b.dyn.RegisterFunc("topic-defaults", config.TopicDefaultKeys, func(next *config.Broker) {
		b.ctrl.SetTopicDefaults(next)
		b.ctrl.DefaultsChanged()
	})
	// num.replica.fetchers (Kafka's BrokerDynamicThreadPool →
	// ReplicaManager.resizeFetcherThreadPool): partitions re-hashed to
	// the new number of fetchers per leader. Validated as Kafka's
	// DynamicThreadPool: at least 1, half to double the current count.
	b.dyn.Register(dynamic.Component{Name: "replica-fetchers", Keys: []string{"num.replica.fetchers"},
		Validate: func(cur, next *config.Broker) error {
			return config.ValidateThreadCount("num.replica.fetchers", cur.NumReplicaFetchers, next.NumReplicaFetchers)
		},
		Apply: func(next *config.Broker) {
			if b.fetchers != nil {
				b.fetchers.Resize(next.NumReplicaFetchers)
			}
		}})
	// Connection quotas: new connections only; open ones stay.
	b.dyn.RegisterFunc("connection-quotas", config.ConnectionLimitKeys, func(next *config.Broker) {
		b.server.SetConnectionLimits(next.ConnectionLimits)
	})
}
