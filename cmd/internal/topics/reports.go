package topics

import (
	"context"
	"fmt"

	"gregor/cmd/internal/clientutil"
)

// LiveBrokerLister is implemented by an Admin that can say which brokers
// are alive (registered in ZooKeeper, or in the cluster's metadata);
// --unavailable-partitions needs it.
type LiveBrokerLister interface {
	// LiveBrokers returns the ids of the live brokers.
	LiveBrokers(ctx context.Context) ([]int32, error)
}

// reporting reports whether a replication report filter was given.
func (o *Options) reporting() bool {
	return o.UnderReplicated || o.Unavailable || o.UnderMinISR || o.AtMinISR
}

// checkReports applies TopicCommandOptions.checkArgs to the report flags:
// each only with --describe, none with another or, for the min-ISR ones,
// with --zookeeper (whose describe does not know min.insync.replicas).
func (o *Options) checkReports() error {
	type flag struct {
		on   bool
		name string
	}
	reports := []flag{{o.UnderReplicated, "under-replicated-partitions"}, {o.UnderMinISR, "under-min-isr-partitions"},
		{o.AtMinISR, "at-min-isr-partitions"}, {o.Unavailable, "unavailable-partitions"}}
	actions := []flag{{o.Alter, "alter"}, {o.Create, "create"}, {o.List, "list"}, {o.Delete, "delete"}}
	for _, r := range reports {
		if !r.on {
			continue
		}
		for _, other := range append(actions, reports...) {
			if other.on && other.name != r.name {
				return clientutil.Usage("Option \"[%s]\" can't be used with option \"[%s]\"", r.name, other.name)
			}
		}
		if (r.name == "under-min-isr-partitions" || r.name == "at-min-isr-partitions") && o.ZooKeeper != "" && o.BootstrapServer == "" {
			return clientutil.Usage("Option \"[%s]\" can't be used with option \"[zookeeper]\"", r.name)
		}
	}
	return nil
}

// partitionFilter returns the predicate of the report flag given, as
// TopicCommand's PartitionDescription: under-replicated is ISR < replicas;
// unavailable is no leader or a leader not among the live brokers;
// under-min-ISR is no leader or ISR < min.insync.replicas; at-min-ISR is
// ISR == min.insync.replicas. A topic whose min.insync.replicas is unknown
// (0) matches the min-ISR filters only by having no leader, as Kafka's
// ZooKeeper describe.
func (o *Options) partitionFilter(ctx context.Context, admin Admin) (func(TopicDescription, PartitionDescription) bool, error) {
	switch {
	case o.UnderReplicated:
		return func(_ TopicDescription, p PartitionDescription) bool { return len(p.ISR) < len(p.Replicas) }, nil
	case o.UnderMinISR:
		return func(d TopicDescription, p PartitionDescription) bool {
			return p.Leader < 0 || (d.MinInSyncReplicas > 0 && len(p.ISR) < d.MinInSyncReplicas)
		}, nil
	case o.AtMinISR:
		return func(d TopicDescription, p PartitionDescription) bool {
			return d.MinInSyncReplicas > 0 && len(p.ISR) == d.MinInSyncReplicas
		}, nil
	case o.Unavailable:
		lister, ok := admin.(LiveBrokerLister)
		if !ok {
			return nil, fmt.Errorf("--unavailable-partitions: this admin cannot list live brokers")
		}
		ids, err := lister.LiveBrokers(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing live brokers: %w", err)
		}
		live := make(map[int32]bool, len(ids))
		for _, id := range ids {
			live[id] = true
		}
		return func(_ TopicDescription, p PartitionDescription) bool { return p.Leader < 0 || !live[p.Leader] }, nil
	}
	return func(TopicDescription, PartitionDescription) bool { return true }, nil
}
