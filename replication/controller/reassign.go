package controller

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// Partition reassignment, Kafka's ZooKeeper-mode algorithm
// (KafkaController.onPartitionReassignment, KIP-455). With OAR the
// original replicas, RAR the target replicas and RS = RAR ∪ OAR (target
// first):
//
//  1. the assignment becomes RS, with adding = RAR − OAR and removing =
//     OAR − RAR written into /brokers/topics/<t> (so a new controller
//     resumes the move); the leader epoch is bumped and every replica of RS
//     gets LeaderAndIsr, which starts the new replicas as followers;
//  2. once every replica of RAR is in the ISR (the leader adds caught-up
//     followers through AlterIsr, whose notification wakes the
//     controller), the leader moves to the first live RAR member of the ISR
//     unless the current leader is in RAR, the removed replicas leave the
//     ISR (leader epoch + 1), the assignment becomes RAR, RAR gets
//     LeaderAndIsr and the removed replicas StopReplica with deletion;
//  3. /brokers/topics/<t> is rewritten with RAR and no adding/removing,
//     the partition is dropped from /admin/reassign_partitions (the znode
//     is deleted when empty) and every broker gets UpdateMetadata.
//
// Reassignments start from the /admin/reassign_partitions znode (written
// by `kafka-reassign-partitions.sh --zookeeper`) or from
// AlterPartitionReassignments (API 45); ListPartitionReassignments (API 46)
// reports the ongoing ones.

// ongoing is a partition reassignment in progress: the replicas being
// added and removed (RS = the assignment; RAR = RS − removing; OAR = RS −
// adding).
type ongoing struct {
	adding, removing []int32
	fromZk           bool // listed in /admin/reassign_partitions
}

// evReassign and evPreferred are the watch events of this file and
// elect.go (values far from cluster.go's, which count up from 1).
const (
	evReassign  eventKind = 100 + iota // /admin/reassign_partitions created, changed or deleted
	evPreferred                        // /admin/preferred_replica_election created
	evRebalance                        // leader.imbalance.check.interval.seconds elapsed
)

// handleAdminEvent dispatches the events of reassignment and election
// (called from handle, on the actor).
func (c *Controller) handleAdminEvent(ev event) error {
	switch ev.kind {
	case evReassign:
		return c.onReassignZnode()
	case evPreferred:
		return c.onPreferredZnode()
	case evRebalance:
		return c.onAutoRebalance()
	case evLogDir:
		return c.onLogDirEvent() // offline.go
	}
	return nil
}

// onFailoverAdmin is the reassignment and election part of
// onControllerFailover: resume the reassignments recorded in the topic
// znodes (adding/removing) and in /admin/reassign_partitions, watch both
// admin znodes, and schedule the leader-imbalance check.
func (c *Controller) onFailoverAdmin() {
	c.reassigning = map[partition.TopicPartition]*ongoing{}
	for _, n := range c.sortedTopics() {
		data, _, err := c.meta.Get(zkmeta.TopicPath(n))
		if err != nil {
			continue
		}
		a, err := zkmeta.DecodeTopicAssignment(n, data)
		if err != nil {
			continue
		}
		for p, rs := range a.Partitions {
			add, rem := a.AddingReplicas[p], a.RemovingReplicas[p]
			if len(add) == 0 && len(rem) == 0 {
				continue
			}
			c.reassigning[partition.TopicPartition{Topic: n, Partition: p}] = &ongoing{adding: add, removing: rem}
			c.log.Info("resuming partition reassignment", zap.String("topic", n), zap.Int32("partition", p),
				zap.Any("replicas", rs), zap.Any("adding", add), zap.Any("removing", rem))
		}
	}
	if err := c.onReassignZnode(); err != nil {
		c.log.Warn("reading "+zkmeta.ReassignPartitionsPath, zap.Error(err))
		c.after(timeRetry, event{kind: evReassign})
	}
	// Resume the API-started ones the znode did not restart.
	var resume []underWay
	for _, tp := range c.sortedReassigning() {
		if t := c.topics[tp.Topic]; t != nil {
			resume = append(resume, underWay{t: t, p: tp.Partition, o: c.reassigning[tp]})
		}
	}
	c.progressReassignments(resume)
	if err := c.onPreferredZnode(); err != nil {
		c.log.Warn("reading "+zkmeta.PreferredReplicaElectionPath, zap.Error(err))
		c.after(timeRetry, event{kind: evPreferred})
	}
	c.scheduleRebalance()
	c.onFailoverOffline() // offline.go: replicas reported offline
}

func (c *Controller) sortedReassigning() []partition.TopicPartition {
	out := make([]partition.TopicPartition, 0, len(c.reassigning))
	for tp := range c.reassigning {
		out = append(out, tp)
	}
	SortTPs(out)
	return out
}

// onReassignZnode reads /admin/reassign_partitions (re-arming its watch)
// and starts the reassignments it lists that are not already under way
// with the same target. Entries that cannot start (unknown partition,
// empty or duplicate replicas, brokers not alive) are removed from the
// znode, as Kafka does.
func (c *Controller) onReassignZnode() error {
	if !c.active {
		return nil
	}
	exists, w, err := c.meta.ExistsW(zkmeta.ReassignPartitionsPath)
	if err != nil {
		return err
	}
	c.forward(evReassign, zkmeta.ReassignPartitionsPath, w)
	if !exists {
		return nil
	}
	data, _, err := c.meta.Get(zkmeta.ReassignPartitionsPath)
	if errors.Is(err, metastore.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	doc, err := DecodeReassignment(data)
	if err != nil {
		c.log.Error("unreadable "+zkmeta.ReassignPartitionsPath+", deleting it", zap.Error(err))
		return c.deleteIgnoringMissing(zkmeta.ReassignPartitionsPath)
	}
	var invalid []partition.TopicPartition
	var starts []reassignStart
	for _, e := range doc.Partitions {
		tp := e.TP()
		if o := c.reassigning[tp]; o != nil && c.topics[tp.Topic] != nil && slices.Equal(targetOf(c.topics[tp.Topic].assignment[tp.Partition], o), e.Replicas) {
			o.fromZk = true
			continue
		}
		starts = append(starts, reassignStart{tp: tp, target: e.Replicas})
	}
	errs := c.startReassignments(starts, true)
	for _, r := range starts {
		if err := errs[r.tp]; err != nil {
			c.log.Warn("partition reassignment from ZooKeeper refused", zap.Stringer("partition", r.tp), zap.Error(err))
			invalid = append(invalid, r.tp)
		}
	}
	changed := len(errs) < len(starts)
	if len(invalid) > 0 {
		if err := c.removeFromReassignZnode(invalid...); err != nil {
			return err
		}
	}
	if changed {
		c.publish()
	}
	return nil
}

// alterReassignmentsLocked is the body of AlterPartitionReassignments, run on the controller actor.
// AlterPartitionReassignments starts (replicas non-nil) or cancels
// (replicas nil) reassignments (API 45, KIP-455). The result holds one
// error per partition: nil, UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_REPLICA_ASSIGNMENT (empty or duplicate replicas, brokers not
// alive), NO_REASSIGNMENT_IN_PROGRESS (cancel of a partition not being
// reassigned). Not the controller: ErrNotController for the whole request.
func (c *Controller) alterReassignmentsLocked(reqs map[partition.TopicPartition][]int32) (map[partition.TopicPartition]error, error) {
	if !c.active {
		return nil, ErrNotController
	}
	out := make(map[partition.TopicPartition]error, len(reqs))
	tps := make([]partition.TopicPartition, 0, len(reqs))
	for tp := range reqs {
		tps = append(tps, tp)
	}
	SortTPs(tps)
	changed := false
	var starts []reassignStart
	for _, tp := range tps {
		replicas := reqs[tp]
		if replicas != nil {
			starts = append(starts, reassignStart{tp: tp, target: replicas})
			continue
		}
		err := c.cancelReassignment(tp)
		out[tp] = err
		changed = changed || err == nil
	}
	errs := c.startReassignments(starts, false)
	for _, r := range starts {
		out[r.tp] = errs[r.tp]
		changed = changed || errs[r.tp] == nil
	}
	if changed {
		c.publish()
	}
	return out, nil
}

// PartitionReassignment is an ongoing reassignment as
// ListPartitionReassignments reports it: the full replica set RS and the
// replicas being added and removed.
type PartitionReassignment struct {
	partition.TopicPartition
	Replicas, Adding, Removing []int32
}

// listReassignmentsLocked is the body of ListPartitionReassignments, run on the controller actor.
// ListPartitionReassignments returns the ongoing reassignments (API 46),
// all of them when filter is nil, else those of the given partitions,
// sorted by topic and partition. Not the controller: ErrNotController.
func (c *Controller) listReassignmentsLocked(filter []partition.TopicPartition) ([]PartitionReassignment, error) {
	if !c.active {
		return nil, ErrNotController
	}
	want := c.sortedReassigning()
	if filter != nil {
		want = want[:0:0]
		for _, tp := range filter {
			if c.reassigning[tp] != nil {
				want = append(want, tp)
			}
		}
		SortTPs(want)
	}
	var out []PartitionReassignment
	for _, tp := range want {
		o, t := c.reassigning[tp], c.topics[tp.Topic]
		if t == nil {
			continue
		}
		out = append(out, PartitionReassignment{TopicPartition: tp, Replicas: slices.Clone(t.assignment[tp.Partition]),
			Adding: slices.Clone(o.adding), Removing: slices.Clone(o.removing)})
	}
	return out, nil
}

// CheckReassignmentTarget validates a target replica list the way Kafka's
// controller does before a reassignment (KafkaController.validateReassignment):
// non-empty, without duplicates, every broker alive. It returns the message
// for INVALID_REPLICA_ASSIGNMENT, or "" when valid.
func CheckReassignmentTarget(replicas []int32, live func(int32) bool, liveList []int32) string {
	if len(replicas) == 0 {
		return "Empty replica list specified in partition reassignment."
	}
	seen := map[int32]bool{}
	for _, r := range replicas {
		if seen[r] {
			return fmt.Sprintf("Duplicate replica ids in partition reassignment replica list: %v", replicas)
		}
		seen[r] = true
	}
	for _, r := range replicas {
		if !live(r) {
			return fmt.Sprintf("Replica assignment has brokers that are not alive. Replica list: %v, live broker list: %v", replicas, liveList)
		}
	}
	return ""
}

// reassignStart is one partition of a batch of reassignments to start.
type reassignStart struct {
	tp     partition.TopicPartition
	target []int32
}

// startReassignments validates and starts moving each partition to its
// target, replacing a reassignment already under way (its added replicas
// that the new target does not keep are stopped and deleted, as Kafka
// does). The batch's effects are grouped as Kafka's controller groups a
// ControllerBrokerRequestBatch: one assignment write per topic, one
// StopReplica per broker for the replicas no longer needed, the leader
// epoch bumps of phase 1 in batched fenced transactions (applyDecisions)
// and one LeaderAndIsr per broker. It returns the refused partitions'
// errors (UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT, or
// UNKNOWN_SERVER_ERROR when the topic's assignment could not be written).
func (c *Controller) startReassignments(reqs []reassignStart, fromZk bool) map[partition.TopicPartition]error {
	errs := map[partition.TopicPartition]error{}
	type started struct {
		t        *topicState
		tp       partition.TopicPartition
		cur      []int32
		o        *ongoing
		unneeded []int32
	}
	var ss []started
	var overridden []partition.TopicPartition
	last := make(map[partition.TopicPartition]int, len(reqs)) // a partition listed twice: the later entry wins
	for i, r := range reqs {
		last[r.tp] = i
	}
	for i, r := range reqs {
		if last[r.tp] != i {
			continue
		}
		tp := r.tp
		t := c.topics[tp.Topic]
		if t == nil {
			errs[tp] = errf(kerr.UnknownTopicOrPartition, "The partition %s does not exist.", tp)
			continue
		}
		cur, ok := t.assignment[tp.Partition]
		if !ok {
			errs[tp] = errf(kerr.UnknownTopicOrPartition, "The partition %s does not exist.", tp)
			continue
		}
		if msg := CheckReassignmentTarget(r.target, c.live, c.liveBrokers()); msg != "" {
			errs[tp] = errf(kerr.InvalidReplicaAssignment, "%s", msg)
			continue
		}
		origin := cur
		if o := c.reassigning[tp]; o != nil {
			origin = minus(cur, o.adding)
		}
		rs := union(r.target, origin)
		o := &ongoing{adding: minus(rs, origin), removing: minus(rs, r.target), fromZk: fromZk}
		if prev := c.reassigning[tp]; prev != nil && prev.fromZk && !fromZk {
			overridden = append(overridden, tp) // an API request overrides a ZooKeeper-started one: it leaves the znode
		}
		c.log.Info("starting partition reassignment", zap.Stringer("partition", tp), zap.Any("current", cur),
			zap.Any("target", r.target), zap.Any("adding", o.adding), zap.Any("removing", o.removing), zap.Bool("zookeeper", fromZk))
		t.assignment[tp.Partition] = rs
		c.reassigning[tp] = o
		ss = append(ss, started{t: t, tp: tp, cur: cur, o: o, unneeded: minus(cur, rs)}) // unneeded: added by a replaced reassignment, not kept
	}
	if len(overridden) > 0 {
		if err := c.removeFromReassignZnode(overridden...); err != nil {
			c.log.Warn("removing overridden reassignments from ZooKeeper", zap.Int("partitions", len(overridden)), zap.Error(err))
		}
	}
	written := map[*topicState]error{}
	for _, st := range ss {
		if _, ok := written[st.t]; !ok {
			written[st.t] = c.writeAssignment(st.t)
		}
	}
	remove := map[int32][]partition.TopicPartition{}
	var bumps []decision
	var kept []started
	for _, st := range ss {
		if err := written[st.t]; err != nil {
			st.t.assignment[st.tp.Partition] = st.cur
			delete(c.reassigning, st.tp)
			errs[st.tp] = errf(kerr.UnknownServerError, "writing the assignment of %s: %v", st.tp, err)
			continue
		}
		kept = append(kept, st)
		for _, id := range st.unneeded {
			remove[id] = append(remove[id], st.tp)
		}
		// Phase 1: bump the leader epoch so that every replica of RS, old
		// and new, learns the new replica set; the new ones start as
		// followers.
		if st.t.state[st.tp.Partition] != nil && !c.targetInSync(st.t, st.tp.Partition, st.o) {
			bumps = append(bumps, decision{st.tp, func(cur PartitionLeadership) (PartitionLeadership, bool) {
				return PartitionLeadership{Leader: cur.Leader, LeaderEpoch: cur.LeaderEpoch + 1, ISR: cur.ISR}, true
			}})
		}
	}
	c.removeReplicasOf(remove)
	failed := c.applyDecisions(bumps)
	states := make([]partition.LeaderAndIsr, 0, len(bumps))
	for _, d := range bumps {
		if err := failed[d.tp]; err != nil {
			c.log.Error("reassignment: bumping leader epoch failed", zap.Stringer("partition", d.tp), zap.Error(err))
		}
		states = append(states, c.stateOf(c.topics[d.tp.Topic], d.tp.Partition))
	}
	c.sendLeaderAndIsr(states, nil)
	rs := make([]underWay, len(kept))
	for i, st := range kept {
		rs[i] = underWay{t: st.t, p: st.tp.Partition, o: st.o}
	}
	c.progressReassignments(rs)
	return errs
}

// cancelReassignment reverts tp to its original replicas (KIP-455 cancel):
// the added replicas are removed once the original ones are in sync.
func (c *Controller) cancelReassignment(tp partition.TopicPartition) error {
	t := c.topics[tp.Topic]
	if t == nil || t.assignment[tp.Partition] == nil {
		return errf(kerr.UnknownTopicOrPartition, "The partition %s does not exist.", tp)
	}
	o := c.reassigning[tp]
	if o == nil {
		return errf(kerr.NoReassignmentInProgress, "No reassignment in progress for %s.", tp)
	}
	origin := minus(t.assignment[tp.Partition], o.adding)
	c.log.Info("cancelling partition reassignment", zap.Stringer("partition", tp), zap.Any("back.to", origin))
	if o.fromZk {
		if err := c.removeFromReassignZnode(tp); err != nil {
			c.log.Warn("removing cancelled reassignment from ZooKeeper", zap.Stringer("partition", tp), zap.Error(err))
		}
	}
	o.fromZk = false
	o.removing, o.adding = o.adding, nil
	if err := c.writeAssignment(t); err != nil {
		return errf(kerr.UnknownServerError, "writing the assignment of %s: %v", tp, err)
	}
	c.progressReassignment(t, tp.Partition, o)
	return nil
}

// targetOf is RAR: the replica set minus the replicas being removed.
func targetOf(rs []int32, o *ongoing) []int32 { return minus(rs, o.removing) }

// targetInSync reports whether every target replica is in the ISR.
func (c *Controller) targetInSync(t *topicState, p int32, o *ongoing) bool {
	st := t.state[p]
	if st == nil {
		return false
	}
	for _, r := range targetOf(t.assignment[p], o) {
		if !contains(st.ISR, r) {
			return false
		}
	}
	return true
}

// progressReassignment completes tp's reassignment when its target
// replicas are all in sync (phases 2 and 3); otherwise it waits for the
// next ISR change. It reports whether the reassignment completed.
func (c *Controller) progressReassignment(t *topicState, p int32, o *ongoing) bool {
	return c.progressReassignments([]underWay{{t: t, p: p, o: o}}) == 1
}

// underWay is one partition's reassignment under way.
type underWay struct {
	t *topicState
	p int32
	o *ongoing
}

// progressReassignments is progressReassignment for many partitions (an
// ISR change notification of many, a batch just started), their effects
// grouped: the new leaders and ISRs in batched fenced transactions
// (applyDecisions), one LeaderAndIsr and one StopReplica per broker, one
// assignment write per topic, one update of /admin/reassign_partitions.
// It returns how many completed.
func (c *Controller) progressReassignments(rs []underWay) int {
	type ready struct {
		underWay
		target  []int32
		leader  int32
		removed []int32
	}
	var ds []decision
	var rd []ready
	for _, r := range rs {
		tp := partition.TopicPartition{Topic: r.t.name, Partition: r.p}
		if c.reassigning[tp] != r.o || !c.targetInSync(r.t, r.p, r.o) {
			continue
		}
		target := targetOf(r.t.assignment[r.p], r.o)
		st := r.t.state[r.p]
		leader := st.Leader
		if leader < 0 || !contains(target, leader) || !c.live(leader) || c.shuttingDown[leader] {
			leader = -1
			for _, b := range target {
				if c.live(b) && !c.shuttingDown[b] && contains(st.ISR, b) {
					leader = b
					break
				}
			}
			if leader < 0 {
				c.log.Warn("reassignment waits: no live target replica can lead", zap.Stringer("partition", tp), zap.Any("target", target))
				continue
			}
		}
		removed := slices.Clone(r.o.removing)
		rd = append(rd, ready{underWay: r, target: target, leader: leader, removed: removed})
		ds = append(ds, decision{tp, func(cur PartitionLeadership) (PartitionLeadership, bool) {
			isr := []int32{}
			for _, b := range cur.ISR {
				if !contains(removed, b) {
					isr = append(isr, b)
				}
			}
			if !contains(isr, leader) {
				isr = append([]int32{leader}, isr...)
			}
			return PartitionLeadership{Leader: leader, LeaderEpoch: cur.LeaderEpoch + 1, ISR: isr}, true
		}})
	}
	if len(rd) == 0 {
		return 0
	}
	failed := c.applyDecisions(ds)
	var states []partition.LeaderAndIsr
	remove := map[int32][]partition.TopicPartition{}
	var topics []*topicState
	seen := map[*topicState]bool{}
	var fromZk, done []partition.TopicPartition
	for _, r := range rd {
		tp := partition.TopicPartition{Topic: r.t.name, Partition: r.p}
		if err := failed[tp]; err != nil {
			c.log.Error("reassignment: electing the leader failed", zap.Stringer("partition", tp), zap.Error(err))
			continue
		}
		r.t.assignment[r.p] = r.target
		delete(c.reassigning, tp)
		states = append(states, c.stateOf(r.t, r.p))
		for _, id := range r.removed {
			remove[id] = append(remove[id], tp)
		}
		if !seen[r.t] {
			seen[r.t] = true
			topics = append(topics, r.t)
		}
		if r.o.fromZk {
			fromZk = append(fromZk, tp)
		}
		done = append(done, tp)
		c.log.Info("partition reassignment completed", zap.Stringer("partition", tp), zap.Any("replicas", r.target),
			zap.Int32("leader", r.leader), zap.Int32("leader.epoch", r.t.state[r.p].LeaderEpoch))
	}
	c.sendLeaderAndIsr(states, nil)
	c.removeReplicasOf(remove)
	for _, t := range topics {
		if err := c.writeAssignment(t); err != nil {
			c.log.Error("reassignment: writing the final assignment failed", zap.String("topic", t.name), zap.Error(err))
		}
	}
	if len(fromZk) > 0 {
		if err := c.removeFromReassignZnode(fromZk...); err != nil {
			c.log.Warn("reassignment: updating "+zkmeta.ReassignPartitionsPath, zap.Int("partitions", len(fromZk)), zap.Error(err))
		}
	}
	return len(done)
}

// removeReplicas stops the given replicas of partition p and deletes their
// logs (Kafka's OfflineReplica → ReplicaDeletionStarted): in-process for
// this broker, StopReplica for the others. A dead broker keeps its files.
func (c *Controller) removeReplicas(t *topicState, p int32, ids []int32) {
	byBroker := make(map[int32][]partition.TopicPartition, len(ids))
	for _, id := range ids {
		byBroker[id] = []partition.TopicPartition{{Topic: t.name, Partition: p}}
	}
	c.removeReplicasOf(byBroker)
}

// removeReplicasOf is removeReplicas for many partitions: one StopReplica
// (delete) per live broker with all of its partitions.
func (c *Controller) removeReplicasOf(byBroker map[int32][]partition.TopicPartition) {
	for id, tps := range byBroker {
		if !c.live(id) || len(tps) == 0 {
			continue
		}
		if id == c.cfg.BrokerID {
			c.stopLocalReplicas(tps, true, "reassignment: deleting the local replicas")
			continue
		}
		c.peers.Send(id, c.stopReplicaRequest(tps, true), c.logFailure(id, "StopReplica"))
	}
}

// writeAssignment rewrites /brokers/topics/<t> from the controller's copy:
// partitions, plus adding/removing of the partitions being reassigned.
func (c *Controller) writeAssignment(t *topicState) error {
	for attempt := 0; ; attempt++ {
		data, version, err := c.meta.Get(zkmeta.TopicPath(t.name))
		if err != nil {
			return err
		}
		a, err := zkmeta.DecodeTopicAssignment(t.name, data)
		if err != nil {
			return err
		}
		a.Partitions = map[int32][]int32{}
		a.AddingReplicas = map[int32][]int32{}
		a.RemovingReplicas = map[int32][]int32{}
		for p, rs := range t.assignment {
			a.Partitions[p] = slices.Clone(rs)
			if o := c.reassigning[partition.TopicPartition{Topic: t.name, Partition: p}]; o != nil {
				if len(o.adding) > 0 {
					a.AddingReplicas[p] = slices.Clone(o.adding)
				}
				if len(o.removing) > 0 {
					a.RemovingReplicas[p] = slices.Clone(o.removing)
				}
			}
		}
		_, err = c.meta.Set(zkmeta.TopicPath(t.name), a.Encode(), version)
		if err == nil || !errors.Is(err, metastore.ErrBadVersion) || attempt >= 3 {
			return err
		}
	}
}

// removeFromReassignZnode drops partitions from /admin/reassign_partitions
// and deletes the znode when none is left.
func (c *Controller) removeFromReassignZnode(tps ...partition.TopicPartition) error {
	for attempt := 0; ; attempt++ {
		data, version, err := c.meta.Get(zkmeta.ReassignPartitionsPath)
		if errors.Is(err, metastore.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		doc, err := DecodeReassignment(data)
		if err != nil {
			return c.deleteIgnoringMissing(zkmeta.ReassignPartitionsPath)
		}
		drop := map[partition.TopicPartition]bool{}
		for _, tp := range tps {
			drop[tp] = true
		}
		kept := doc.Partitions[:0]
		for _, e := range doc.Partitions {
			if !drop[e.TP()] {
				kept = append(kept, e)
			}
		}
		doc.Partitions = kept
		if len(kept) == 0 {
			err = c.meta.Delete(zkmeta.ReassignPartitionsPath, version)
			if errors.Is(err, metastore.ErrNoNode) {
				return nil
			}
		} else {
			_, err = c.meta.Set(zkmeta.ReassignPartitionsPath, doc.Encode(), version)
		}
		if err == nil || !errors.Is(err, metastore.ErrBadVersion) || attempt >= 3 {
			return err
		}
	}
}

func (c *Controller) deleteIgnoringMissing(path string) error {
	if err := c.meta.Delete(path, metastore.AnyVersion); err != nil && !errors.Is(err, metastore.ErrNoNode) {
		return err
	}
	return nil
}

// onIsrChangeReassign continues the reassignments of partitions whose ISR
// changed (Kafka's PartitionReassignmentIsrChangeHandler).
func (c *Controller) onIsrChangeReassign(tps []partition.TopicPartition) {
	var rs []underWay
	for _, tp := range tps {
		o := c.reassigning[tp]
		t := c.topics[tp.Topic]
		if o == nil || t == nil {
			continue
		}
		rs = append(rs, underWay{t: t, p: tp.Partition, o: o})
	}
	if c.progressReassignments(rs) > 0 {
		c.publish()
	}
}

// union is a followed by the members of b not in a (order kept).
func union(a, b []int32) []int32 {
	out := slices.Clone(a)
	for _, x := range b {
		if !contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// minus is a without the members of b (order kept).
func minus(a, b []int32) []int32 {
	out := []int32{}
	for _, x := range a {
		if !contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func sortedInt32s(s []int32) []int32 {
	out := slices.Clone(s)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
