package config

import (
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/quota"
)

// Quotas are the broker keys of Kafka's quota managers: the measuring
// windows of the client quotas (produce, fetch, request time), of the
// controller mutation quota (KIP-599), of the replication throttles, and
// the broker's replication throttle rates (dynamic broker configs in
// Kafka: /config/brokers/<id>; also accepted in server.properties here).
type Quotas struct {
	// Client is quota.window.num (default 11) × quota.window.size.seconds
	// (default 1): the window produce/fetch/request quotas are measured over.
	Client quota.Config
	// ControllerMutation is controller.quota.window.num (default 11) ×
	// controller.quota.window.size.seconds (default 1).
	ControllerMutation quota.Config
	// Replication is replication.quota.window.num (default 11) ×
	// replication.quota.window.size.seconds (default 1).
	Replication quota.Config
	// AlterLogDirs is alter.log.dirs.replication.quota.window.num (default
	// 11) × alter.log.dirs.replication.quota.window.size.seconds (default 1).
	AlterLogDirs quota.Config

	// LeaderReplicationThrottledRate is leader.replication.throttled.rate
	// (bytes/s, default Long.MaxValue = unlimited): the rate at which a
	// leader serves throttled replicas (topic config
	// leader.replication.throttled.replicas) to out-of-sync followers.
	LeaderReplicationThrottledRate int64
	// FollowerReplicationThrottledRate is follower.replication.throttled.rate
	// (bytes/s, default Long.MaxValue): the rate at which a follower fetches
	// its throttled replicas (follower.replication.throttled.replicas) while
	// they are out of sync.
	FollowerReplicationThrottledRate int64
	// ReplicaAlterLogDirsIOMaxBytesPerSecond is
	// replica.alter.log.dirs.io.max.bytes.per.second (bytes/s, default
	// Long.MaxValue): moves of replicas between log dirs
	// (kafka-reassign-partitions --replica-alter-log-dirs-throttle).
	ReplicaAlterLogDirsIOMaxBytesPerSecond int64
}

func defaultQuotas() Quotas {
	return Quotas{
		Client: quota.DefaultConfig, ControllerMutation: quota.DefaultConfig,
		Replication: quota.DefaultConfig, AlterLogDirs: quota.DefaultConfig,
		LeaderReplicationThrottledRate:         math.MaxInt64,
		FollowerReplicationThrottledRate:       math.MaxInt64,
		ReplicaAlterLogDirsIOMaxBytesPerSecond: math.MaxInt64,
	}
}

func windowNumKey(field func(b *Broker) *quota.Config) brokerKey {
	return intKey(func(b *Broker) *int { return &field(b).Samples }, 32, 1)
}

func windowSecondsKey(field func(b *Broker) *quota.Config) brokerKey {
	set := func(b *Broker, key, v string) error {
		n, err := parseInt(key, v, 32, 1)
		if err != nil {
			return err
		}
		field(b).Window = time.Duration(n) * time.Second
		return nil
	}
	return brokerKey{set, kmsg.ConfigTypeInt, func(d *Broker) string { return i64(int64(field(d).Window / time.Second)) }}
}

// quotaKeys are added to brokerKeys (keys.go) by init.
var quotaKeys = map[string]brokerKey{
	"quota.window.num":                                     windowNumKey(func(b *Broker) *quota.Config { return &b.Quotas.Client }),
	"quota.window.size.seconds":                            windowSecondsKey(func(b *Broker) *quota.Config { return &b.Quotas.Client }),
	"controller.quota.window.num":                          windowNumKey(func(b *Broker) *quota.Config { return &b.Quotas.ControllerMutation }),
	"controller.quota.window.size.seconds":                 windowSecondsKey(func(b *Broker) *quota.Config { return &b.Quotas.ControllerMutation }),
	"replication.quota.window.num":                         windowNumKey(func(b *Broker) *quota.Config { return &b.Quotas.Replication }),
	"replication.quota.window.size.seconds":                windowSecondsKey(func(b *Broker) *quota.Config { return &b.Quotas.Replication }),
	"alter.log.dirs.replication.quota.window.num":          windowNumKey(func(b *Broker) *quota.Config { return &b.Quotas.AlterLogDirs }),
	"alter.log.dirs.replication.quota.window.size.seconds": windowSecondsKey(func(b *Broker) *quota.Config { return &b.Quotas.AlterLogDirs }),
	"leader.replication.throttled.rate":                    intKey(func(b *Broker) *int64 { return &b.Quotas.LeaderReplicationThrottledRate }, 64, 0),
	"follower.replication.throttled.rate":                  intKey(func(b *Broker) *int64 { return &b.Quotas.FollowerReplicationThrottledRate }, 64, 0),
	"replica.alter.log.dirs.io.max.bytes.per.second":       intKey(func(b *Broker) *int64 { return &b.Quotas.ReplicaAlterLogDirsIOMaxBytesPerSecond }, 64, 0),
}

func init() {
	for k, v := range quotaKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
}
