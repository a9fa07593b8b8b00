package controller

import "gregor/partition"

// An event's work is planned before it is done, as Kafka's controller
// state machines fill a ControllerBrokerRequestBatch: the pure functions
// here decide, from a read-only view of the controller's state, which
// partition state znodes to write (planElections) and which brokers get
// which LeaderAndIsr states (planLeaderAndIsr); the executor
// (execute.go) writes the states in batched, epoch-fenced transactions
// and sends one request per broker.

// partitionView is what the plan builder reads of one partition.
type partitionView struct {
	tp       partition.TopicPartition
	replicas []int32              // assigned replicas, preferred leader first
	cur      *PartitionLeadership // nil: no state znode yet (a new partition)
	version  int32                // the state znode's version, when cur != nil
	online   func(int32) bool     // live, not shutting down, replica not offline
	unclean  bool                 // unclean.leader.election.enable of the topic
}

// stateWrite is one partition state znode write of a plan: a create
// when the partition has no state yet, else a set conditional on version.
type stateWrite struct {
	tp      partition.TopicPartition
	create  bool
	version int32
	prev    *PartitionLeadership // the state replaced (nil for a create), for election counters
	next    PartitionLeadership
}

// planElections decides the leadership of every viewed partition with
// NextLeadership (Kafka's OfflinePartitionLeaderElectionStrategy plus the
// ISR clean-up of a dead replica) and returns a write for each partition
// whose state changes, in the order of views. Pure.
func planElections(views []partitionView) []stateWrite {
	var out []stateWrite
	for _, v := range views {
		next, changed := NextLeadership(v.cur, v.replicas, v.online, v.unclean)
		if !changed {
			continue
		}
		w := stateWrite{tp: v.tp, create: v.cur == nil, version: v.version, next: next}
		if v.cur != nil {
			prev := *v.cur
			w.prev = &prev
		}
		out = append(out, w)
	}
	return out
}

// planLeaderAndIsr groups states by the brokers that must receive them:
// every replica r of a state's partition for which deliver(tp, r) holds
// (live, the replica not offline, and in the event's target set). Each
// broker's list keeps the order of states, so one LeaderAndIsr per broker
// carries all of an event's changes. Pure.
func planLeaderAndIsr(states []partition.LeaderAndIsr, deliver func(tp partition.TopicPartition, broker int32) bool) map[int32][]partition.LeaderAndIsr {
	per := map[int32][]partition.LeaderAndIsr{}
	for _, s := range states {
		for _, r := range s.Replicas {
			if deliver(s.TopicPartition, r) {
				per[r] = append(per[r], s)
			}
		}
	}
	return per
}

// mergeLeaderAndIsr appends each broker's states of more to plan (the
// partitions of the two are disjoint), so an event that plans in steps
// still sends one request per broker.
func mergeLeaderAndIsr(plan, more map[int32][]partition.LeaderAndIsr) map[int32][]partition.LeaderAndIsr {
	for id, ss := range more {
		plan[id] = append(plan[id], ss...)
	}
	return plan
}
