package reassign

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"gregor/partition"
	"gregor/replication/controller"
)

// Replication throttles of a reassignment, as Kafka's
// ReassignPartitionsCommand sets and clears them: --throttle N sets
// leader.replication.throttled.rate and follower.replication.throttled.rate
// to N on every broker of the moves (sources and destinations) and the
// topic configs leader.replication.throttled.replicas (each moving
// partition's existing replicas, "p:b") and
// follower.replication.throttled.replicas (its new replicas);
// --replica-alter-log-dirs-throttle N sets
// replica.alter.log.dirs.io.max.bytes.per.second on the brokers whose
// replicas change log dir; --verify (and --cancel) remove all of them
// once nothing is moving, unless --preserve-throttles.

// Broker and topic throttle config names (Kafka's QuotaConfigs).
const (
	leaderRateKey       = "leader.replication.throttled.rate"
	followerRateKey     = "follower.replication.throttled.rate"
	logDirsRateKey      = "replica.alter.log.dirs.io.max.bytes.per.second"
	leaderReplicasKey   = "leader.replication.throttled.replicas"
	followerReplicasKey = "follower.replication.throttled.replicas"
)

// brokerThrottleKeys and topicThrottleKeys are what clearing removes.
var (
	brokerThrottleKeys = []string{leaderRateKey, followerRateKey, logDirsRateKey}
	topicThrottleKeys  = []string{leaderReplicasKey, followerReplicasKey}
)

// throttleWriter writes the throttle configs: over ZooKeeper
// (/config/brokers/<id>, /config/topics/<t> and their /config/changes
// notifications) or IncrementalAlterConfigs.
type throttleWriter interface {
	// setTopicConfigs sets each topic's keys (topic → key → value).
	setTopicConfigs(ctx context.Context, set map[string]map[string]string) error
	// setBrokerConfigs sets kv on each broker.
	setBrokerConfigs(ctx context.Context, brokers []int32, kv map[string]string) error
	// deleteBrokerConfigs removes keys from each broker's config.
	deleteBrokerConfigs(ctx context.Context, brokers []int32, keys []string) error
	// deleteTopicConfigs removes keys from each topic's config.
	deleteTopicConfigs(ctx context.Context, topics []string, keys []string) error
}

// partitionMove is one partition's move: the replicas it has (sources)
// and the ones it gains (destinations).
type partitionMove struct{ sources, destinations map[int32]bool }

// moveMap is topic → partition → move (Kafka's MoveMap).
type moveMap map[string]map[int32]partitionMove

func idSet(ids []int32) map[int32]bool {
	m := make(map[int32]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// proposedMoves is Kafka's calculateProposedMoveMap: the moves of the
// reassignments under way (their replicas minus the adding ones are the
// sources, the adding ones the destinations) and of the proposed ones
// (sources: those of an ongoing move of the partition, else its current
// replicas; destinations: the proposed replicas that are not sources).
func proposedMoves(ongoing []controller.PartitionReassignment, proposed, current map[partition.TopicPartition][]int32) (moveMap, error) {
	mm := moveMap{}
	at := func(topic string) map[int32]partitionMove {
		if mm[topic] == nil {
			mm[topic] = map[int32]partitionMove{}
		}
		return mm[topic]
	}
	for _, r := range ongoing {
		src := idSet(r.Replicas)
		for _, a := range r.Adding {
			delete(src, a)
		}
		at(r.Topic)[r.Partition] = partitionMove{sources: src, destinations: idSet(r.Adding)}
	}
	for _, tp := range sortedTPs(proposed) {
		pm := at(tp.Topic)
		var src map[int32]bool
		if m, ok := pm[tp.Partition]; ok {
			src = m.sources
		} else if cur, ok := current[tp]; ok {
			src = idSet(cur)
		} else {
			return nil, fmt.Errorf("Trying to reassign a topic partition %s with 0 replicas", tp)
		}
		dst := map[int32]bool{}
		for _, r := range proposed[tp] {
			if !src[r] {
				dst[r] = true
			}
		}
		pm[tp.Partition] = partitionMove{sources: src, destinations: dst}
	}
	return mm, nil
}

// throttleLists is Kafka's calculateLeaderThrottles (leader: every
// source "p:b") or calculateFollowerThrottles (follower: every
// destination that is not a source), per topic, sorted as strings (Kafka
// collects them in a TreeSet<String>).
func throttleLists(mm moveMap, leader bool) map[string]string {
	out := map[string]string{}
	for topic, parts := range mm {
		var items []string
		for p, m := range parts {
			ids := m.sources
			if !leader {
				ids = m.destinations
			}
			for b := range ids {
				if leader || !m.sources[b] {
					items = append(items, fmt.Sprintf("%d:%d", p, b))
				}
			}
		}
		sort.Strings(items)
		out[topic] = strings.Join(items, ",")
	}
	return out
}

// reassigningBrokers is Kafka's calculateReassigningBrokers: every source
// and destination, sorted.
func reassigningBrokers(mm moveMap) []int32 {
	set := map[int32]bool{}
	for _, parts := range mm {
		for _, m := range parts {
			for b := range m.sources {
				set[b] = true
			}
			for b := range m.destinations {
				set[b] = true
			}
		}
	}
	return sortedSet(set)
}

func sortedSet(set map[int32]bool) []int32 {
	ids := make([]int32, 0, len(set))
	for b := range set {
		ids = append(ids, b)
	}
	return sortIDs(ids)
}

// setReassignmentThrottle is Kafka's modifyReassignmentThrottle: the
// topic throttled-replicas lists, then the rates on the brokers of the
// moves, then its line.
func setReassignmentThrottle(ctx context.Context, w throttleWriter, mm moveMap, rate int64, out io.Writer) error {
	leader, follower := throttleLists(mm, true), throttleLists(mm, false)
	set := map[string]map[string]string{}
	for t, v := range leader {
		set[t] = map[string]string{leaderReplicasKey: v}
	}
	for t, v := range follower {
		if set[t] == nil {
			set[t] = map[string]string{}
		}
		set[t][followerReplicasKey] = v
	}
	if err := w.setTopicConfigs(ctx, set); err != nil {
		return err
	}
	v := strconv.FormatInt(rate, 10)
	if err := w.setBrokerConfigs(ctx, reassigningBrokers(mm), map[string]string{leaderRateKey: v, followerRateKey: v}); err != nil {
		return err
	}
	fmt.Fprintf(out, "The inter-broker throttle limit was set to %d B/s\n", rate)
	return nil
}

// setLogDirThrottle is Kafka's modifyLogDirThrottle.
func setLogDirThrottle(ctx context.Context, w throttleWriter, brokers []int32, rate int64, out io.Writer) error {
	if err := w.setBrokerConfigs(ctx, brokers, map[string]string{logDirsRateKey: strconv.FormatInt(rate, 10)}); err != nil {
		return err
	}
	fmt.Fprintf(out, "The replica-alter-dir throttle limit was set to %d B/s\n", rate)
	return nil
}

// logDirBrokers are the brokers of the file's replicas with a log dir
// other than "any" (Kafka's calculateMovingBrokers).
func logDirBrokers(doc controller.Reassignment) []int32 {
	set := map[int32]bool{}
	for _, e := range doc.Partitions {
		for i, d := range e.LogDirs {
			if d != "any" && i < len(e.Replicas) {
				set[e.Replicas[i]] = true
			}
		}
	}
	return sortedSet(set)
}

// clearAllThrottles is Kafka's clearAllThrottles: the broker throttles of
// every live broker and every broker of the file, the topic throttles of
// every topic of the file, each with its line.
func clearAllThrottles(ctx context.Context, cl cluster, w throttleWriter, target map[partition.TopicPartition][]int32, topics []string, out io.Writer) error {
	live, err := cl.brokers(ctx)
	if err != nil {
		return err
	}
	set := idSet(live)
	for _, rs := range target {
		for _, r := range rs {
			set[r] = true
		}
	}
	ids := sortedSet(set)
	fmt.Fprintf(out, "Clearing broker-level throttles on broker%s %s\n", plural(len(ids)), joinIDs(ids))
	if err := w.deleteBrokerConfigs(ctx, ids, brokerThrottleKeys); err != nil {
		return err
	}
	fmt.Fprintf(out, "Clearing topic-level throttles on topic%s %s\n", plural(len(topics)), strings.Join(topics, ","))
	return w.deleteTopicConfigs(ctx, topics, topicThrottleKeys)
}
