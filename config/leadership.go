package config

import (
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AutoLeaderRebalance is the controller's automatic preferred-leader
// election (Kafka's checkAndTriggerAutoLeaderRebalance).
type AutoLeaderRebalance struct {
	// Enable is auto.leader.rebalance.enable (default true).
	Enable bool
	// CheckInterval is leader.imbalance.check.interval.seconds (default
	// 300, at least 1): how often the active controller checks.
	CheckInterval time.Duration
	// PerBrokerPercentage is leader.imbalance.per.broker.percentage
	// (default 10): a broker whose share of preferred-replica partitions
	// led by another broker is above this percentage gets them back.
	PerBrokerPercentage int
}

func defaultAutoLeaderRebalance() AutoLeaderRebalance {
	return AutoLeaderRebalance{Enable: true, CheckInterval: 300 * time.Second, PerBrokerPercentage: 10}
}

// leadershipKeys are the keys of replica placement and leadership, added
// to brokerKeys by init. broker.rack is read from Raw by the controller
// (its registration and AssignReplicasWithRacks).
var leadershipKeys = map[string]brokerKey{
	"broker.rack":                  nullKey(acceptAny, kmsg.ConfigTypeString),
	"auto.leader.rebalance.enable": boolKey(func(b *Broker) *bool { return &b.AutoLeaderRebalance.Enable }),
	"leader.imbalance.check.interval.seconds": {func(b *Broker, key, v string) error {
		n, err := parseInt(key, v, 64, 1)
		if err != nil {
			return err
		}
		b.AutoLeaderRebalance.CheckInterval = time.Duration(n) * time.Second
		return nil
	}, kmsg.ConfigTypeLong, func(d *Broker) string {
		return strconv.FormatInt(int64(d.AutoLeaderRebalance.CheckInterval/time.Second), 10)
	}},
	"leader.imbalance.per.broker.percentage": intKey(func(b *Broker) *int { return &b.AutoLeaderRebalance.PerBrokerPercentage }, 32, 0),
	// replica.selector.class (KIP-392): null (leader only) or Kafka's
	// RackAwareReplicaSelector, the one selector built in; a custom class
	// cannot run here, so it is refused.
	"replica.selector.class": nullKey(func(b *Broker, key, v string) error {
		if v != "" && v != RackAwareReplicaSelector {
			return invalid(key, v, "only %s is supported (or no value: consumers fetch from the leader): Gregor cannot run a custom replica selector", RackAwareReplicaSelector)
		}
		b.ReplicaSelector = v
		return nil
	}, kmsg.ConfigTypeClass),
}

// RackAwareReplicaSelector is Kafka's rack-aware replica selector class
// (KIP-392), the one value replica.selector.class accepts: a consumer
// whose Fetch (v11+) names a rack is pointed to an in-sync replica in it
// (wire/handlers/fetch_preferred.go).
const RackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

func init() {
	for k, v := range leadershipKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
}
