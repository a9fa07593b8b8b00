package controller

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// Leader elections on demand (Kafka's KafkaController.onReplicaElection):
// the ElectLeaders API (43, KIP-460), the /admin/preferred_replica_election
// znode (kafka-preferred-replica-election.sh --zookeeper) and the
// automatic preferred-leader rebalance (auto.leader.rebalance.enable).

// timeRetry is the delay before a failed admin event is retried.
const timeRetry = time.Second

// ElectionType is ElectLeaders' election_type (KIP-460).
type ElectionType int8

// Election types, with Kafka's wire values.
const (
	ElectPreferred ElectionType = 0 // PreferredReplicaPartitionLeaderElectionStrategy
	ElectUnclean   ElectionType = 1 // UncleanLeaderElectionStrategy (any live replica)
)

func (e ElectionType) strategy() string {
	if e == ElectUnclean {
		return "UncleanLeaderElectionStrategy"
	}
	return "PreferredReplicaPartitionLeaderElectionStrategy"
}

// electLeadersLocked is the body of ElectLeaders, run on the controller actor.
// ElectLeaders runs elections for the given partitions, or for every
// partition when tps is nil (then partitions that need no election are
// left out of the result). Per partition: nil (elected),
// ELECTION_NOT_NEEDED (preferred: the preferred replica leads already;
// unclean: a live leader exists), PREFERRED_LEADER_NOT_AVAILABLE (the
// preferred replica is dead, shutting down or out of the ISR),
// ELIGIBLE_LEADERS_NOT_AVAILABLE (unclean: no live replica),
// UNKNOWN_TOPIC_OR_PARTITION. Not the controller: ErrNotController.
func (c *Controller) electLeadersLocked(typ ElectionType, tps []partition.TopicPartition) (map[partition.TopicPartition]error, error) {
	if !c.active {
		return nil, ErrNotController
	}
	all := tps == nil
	if all {
		tps = c.allPartitions()
	}
	out, states := c.electLocked(typ, tps)
	if all {
		for tp, err := range out {
			if errors.Is(err, kerr.ElectionNotNeeded) {
				delete(out, tp)
			}
		}
	}
	if len(states) > 0 {
		c.sendLeaderAndIsr(states, nil)
		c.publish()
	}
	return out, nil
}

func (c *Controller) allPartitions() []partition.TopicPartition {
	var out []partition.TopicPartition
	for _, n := range c.sortedTopics() {
		for _, p := range c.topics[n].sortedPartitions() {
			out = append(out, partition.TopicPartition{Topic: n, Partition: p})
		}
	}
	return out
}

// electLocked decides and writes the elections (batched, applyDecisions);
// it returns the outcome per partition and the LeaderAndIsr states to
// send.
func (c *Controller) electLocked(typ ElectionType, tps []partition.TopicPartition) (map[partition.TopicPartition]error, []partition.LeaderAndIsr) {
	out := make(map[partition.TopicPartition]error, len(tps))
	var states []partition.LeaderAndIsr
	var ds []decision
	leaderOf := map[partition.TopicPartition]int32{}
	before := map[partition.TopicPartition]PartitionLeadership{}
	for _, tp := range tps {
		if _, dup := out[tp]; dup {
			continue // named twice: one election (Kafka takes a set)
		}
		if _, dup := leaderOf[tp]; dup {
			continue
		}
		t := c.topics[tp.Topic]
		if t == nil || t.assignment[tp.Partition] == nil {
			out[tp] = errf(kerr.UnknownTopicOrPartition, "The partition %s does not exist.", tp)
			continue
		}
		st := t.state[tp.Partition]
		if st == nil {
			out[tp] = errf(kerr.EligibleLeadersNotAvailable, "Partition %s has no state yet.", tp)
			continue
		}
		next, err := c.decideElection(typ, tp, t.assignment[tp.Partition], st.PartitionLeadership)
		if err != nil {
			out[tp] = err
			continue
		}
		leader, tp := next.Leader, tp
		leaderOf[tp], before[tp] = leader, st.PartitionLeadership
		ds = append(ds, decision{tp, func(cur PartitionLeadership) (PartitionLeadership, bool) {
			n, err := c.decideElection(typ, tp, t.assignment[tp.Partition], cur)
			if err != nil || n.Leader != leader {
				return cur, false
			}
			return n, true
		}})
	}
	failed := c.applyDecisions(ds)
	for _, d := range ds {
		tp, leader := d.tp, leaderOf[d.tp]
		t := c.topics[tp.Topic]
		if werr := failed[tp]; werr != nil {
			out[tp] = errf(kerr.UnknownServerError, "writing the state of %s: %v", tp, werr)
			continue
		}
		if t.state[tp.Partition].Leader != leader {
			out[tp] = errf(kerr.ElectionNotNeeded, "Leader election not needed for topic partition.")
			continue
		}
		out[tp] = nil
		b := before[tp]
		emitElection(c.sys, tp.Topic, &b, t.state[tp.Partition].PartitionLeadership)
		states = append(states, c.stateOf(t, tp.Partition))
		c.log.Info("leader elected", zap.Stringer("partition", tp), zap.String("strategy", typ.strategy()),
			zap.Int32("leader", leader), zap.Int32("leader.epoch", t.state[tp.Partition].LeaderEpoch))
	}
	return out, states
}

// decideElection is the pure decision of one election (Kafka's
// PartitionLeaderElectionAlgorithms): preferred = the first assigned
// replica, if live, not shutting down and in the ISR; unclean = keep a
// live leader, else the first live ISR member, else the first live
// replica with the ISR reset to it.
func (c *Controller) decideElection(typ ElectionType, tp partition.TopicPartition, replicas []int32, cur PartitionLeadership) (PartitionLeadership, error) {
	eligible := func(id int32) bool { return c.live(id) && !c.shuttingDown[id] }
	if typ == ElectUnclean {
		if cur.Leader >= 0 && c.live(cur.Leader) {
			return cur, errf(kerr.ElectionNotNeeded, "Leader election not needed for topic partition.")
		}
		for _, r := range replicas {
			if eligible(r) && contains(cur.ISR, r) {
				return PartitionLeadership{Leader: r, LeaderEpoch: cur.LeaderEpoch + 1, ISR: liveOnly(cur.ISR, c.live)}, nil
			}
		}
		for _, r := range replicas {
			if eligible(r) {
				return PartitionLeadership{Leader: r, LeaderEpoch: cur.LeaderEpoch + 1, ISR: []int32{r}}, nil
			}
		}
		return cur, errf(kerr.EligibleLeadersNotAvailable, "Failed to elect leader for partition %s under strategy %s", tp, typ.strategy())
	}
	preferred := replicas[0]
	if cur.Leader == preferred {
		return cur, errf(kerr.ElectionNotNeeded, "Leader election not needed for topic partition.")
	}
	if !eligible(preferred) || !contains(cur.ISR, preferred) {
		return cur, errf(kerr.PreferredLeaderNotAvailable, "Failed to elect leader for partition %s under strategy %s", tp, typ.strategy())
	}
	return PartitionLeadership{Leader: preferred, LeaderEpoch: cur.LeaderEpoch + 1, ISR: cur.ISR}, nil
}

func liveOnly(ids []int32, live func(int32) bool) []int32 {
	out := []int32{}
	for _, id := range ids {
		if live(id) {
			out = append(out, id)
		}
	}
	return out
}

// onPreferredZnode runs the preferred replica election that
// /admin/preferred_replica_election asks for (written by
// kafka-preferred-replica-election.sh --zookeeper), then deletes the znode,
// and re-arms the watch for the next one.
func (c *Controller) onPreferredZnode() error {
	if !c.active {
		return nil
	}
	exists, w, err := c.meta.ExistsW(zkmeta.PreferredReplicaElectionPath)
	if err != nil {
		return err
	}
	c.forward(evPreferred, zkmeta.PreferredReplicaElectionPath, w)
	if !exists {
		return nil
	}
	data, _, err := c.meta.Get(zkmeta.PreferredReplicaElectionPath)
	if errors.Is(err, metastore.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	doc, derr := DecodeElection(data)
	if derr != nil {
		c.log.Error("unreadable "+zkmeta.PreferredReplicaElectionPath+", deleting it", zap.Error(derr))
	} else {
		var tps []partition.TopicPartition
		seen := map[partition.TopicPartition]bool{}
		for _, tp := range doc.Partitions {
			if !seen[tp] {
				seen[tp] = true
				tps = append(tps, tp)
			}
		}
		// Partitions under reassignment are skipped, as Kafka does.
		var ready []partition.TopicPartition
		for _, tp := range tps {
			if c.reassigning[tp] == nil {
				ready = append(ready, tp)
			}
		}
		res, states := c.electLocked(ElectPreferred, ready)
		for _, tp := range ready {
			if err := res[tp]; err != nil && !errors.Is(err, kerr.ElectionNotNeeded) {
				c.log.Warn("preferred replica election failed", zap.Stringer("partition", tp), zap.Error(err))
			}
		}
		if len(states) > 0 {
			c.sendLeaderAndIsr(states, nil)
			c.publish()
		}
	}
	// The znode goes once processed; the deletion fires the watch armed
	// above, which then finds nothing.
	return c.deleteIgnoringMissing(zkmeta.PreferredReplicaElectionPath)
}

// rebalanceConfig is auto.leader.rebalance.enable,
// leader.imbalance.check.interval.seconds and
// leader.imbalance.per.broker.percentage (config.AutoLeaderRebalance).
func (c *Controller) rebalanceConfig() (enabled bool, interval time.Duration, percent int) {
	r := c.cfg.AutoLeaderRebalance
	return r.Enable, r.CheckInterval, r.PerBrokerPercentage
}

// scheduleRebalance arms the next leader-imbalance check (active
// controller with auto.leader.rebalance.enable only).
func (c *Controller) scheduleRebalance() {
	if enabled, interval, _ := c.rebalanceConfig(); enabled && c.active {
		c.after(interval, event{kind: evRebalance})
	}
}

// onAutoRebalance is Kafka's checkAndTriggerAutoLeaderRebalance: for each
// preferred-leader broker, the imbalance ratio is the share of its
// preferred partitions led by another broker; above
// leader.imbalance.per.broker.percentage, a preferred election runs for
// those partitions whose preferred replica is live, in the ISR and not
// being reassigned.
func (c *Controller) onAutoRebalance() error {
	if !c.active {
		return nil
	}
	err := c.autoRebalance()
	c.scheduleRebalance() // not deferred: an abandoned run must not touch state (turn.go)
	return err
}

// autoRebalance is one check of onAutoRebalance.
func (c *Controller) autoRebalance() error {
	_, _, percent := c.rebalanceConfig()
	todo := RebalanceCandidates(c.preferredView(), percent)
	var ready []partition.TopicPartition
	for _, tp := range todo {
		t := c.topics[tp.Topic]
		st := t.state[tp.Partition]
		pref := t.assignment[tp.Partition][0]
		if c.reassigning[tp] == nil && c.live(pref) && !c.shuttingDown[pref] && contains(st.ISR, pref) {
			ready = append(ready, tp)
		}
	}
	if len(ready) == 0 {
		return nil
	}
	c.log.Info("leader imbalance above leader.imbalance.per.broker.percentage: preferred replica election", zap.Int("partitions", len(ready)))
	_, states := c.electLocked(ElectPreferred, ready)
	if len(states) > 0 {
		c.sendLeaderAndIsr(states, nil)
		c.publish()
	}
	return nil
}

// PreferredLeadership is one partition as the imbalance check sees it.
type PreferredLeadership struct {
	partition.TopicPartition
	Preferred int32 // first assigned replica
	Leader    int32 // current leader (-1 none)
}

// preferredView lists every partition with a state and its preferred replica.
func (c *Controller) preferredView() []PreferredLeadership {
	var out []PreferredLeadership
	for _, tp := range c.allPartitions() {
		t := c.topics[tp.Topic]
		st := t.state[tp.Partition]
		rs := t.assignment[tp.Partition]
		if st == nil || len(rs) == 0 {
			continue
		}
		out = append(out, PreferredLeadership{TopicPartition: tp, Preferred: rs[0], Leader: st.Leader})
	}
	return out
}

// RebalanceCandidates returns, sorted, the partitions not led by their
// preferred replica whose preferred broker's imbalance ratio (partitions
// it should lead but does not / partitions it should lead) exceeds
// percent (leader.imbalance.per.broker.percentage).
func RebalanceCandidates(view []PreferredLeadership, percent int) []partition.TopicPartition {
	total := map[int32]int{}
	off := map[int32][]partition.TopicPartition{}
	for _, v := range view {
		total[v.Preferred]++
		if v.Leader != v.Preferred {
			off[v.Preferred] = append(off[v.Preferred], v.TopicPartition)
		}
	}
	var out []partition.TopicPartition
	for b, tps := range off {
		if float64(len(tps))/float64(total[b]) > float64(percent)/100 {
			out = append(out, tps...)
		}
	}
	SortTPs(out)
	return out
}

// String renders an election type as the tools print it.
func (e ElectionType) String() string {
	if e == ElectUnclean {
		return "UNCLEAN"
	}
	return "PREFERRED"
}

// ParseElectionType reads --election-type (preferred|unclean, any case).
func ParseElectionType(s string) (ElectionType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "preferred":
		return ElectPreferred, nil
	case "unclean":
		return ElectUnclean, nil
	}
	return 0, fmt.Errorf("unknown election type %q: expected preferred or unclean", s)
}
