package controller

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// AssignReplicas spreads nPartitions partitions of replicationFactor
// replicas over brokers, Kafka's rack-unaware
// AdminUtils.assignReplicasToBrokers: the first replica of each partition
// goes round-robin from startIndex; the other replicas follow it at a shift
// that grows by one every len(brokers) partitions, so leaders and followers
// both spread evenly. startIndex < 0 picks a random start (and shift), as
// Kafka does for new topics; CreatePartitions passes the index of partition
// 0's first replica. Partition ids start at startPartition.
//
// brokers must be non-empty and replicationFactor in 1..len(brokers); the
// result maps partition id → replicas, preferred leader first.
func AssignReplicas(brokers []int32, nPartitions int32, replicationFactor int16, startIndex int, startPartition int32) map[int32][]int32 {
	bs := append([]int32(nil), brokers...)
	sort.Slice(bs, func(i, j int) bool { return bs[i] < bs[j] })
	n := len(bs)
	shift := startIndex
	if startIndex < 0 {
		startIndex = rand.IntN(n)
		shift = rand.IntN(n)
	}
	out := make(map[int32][]int32, nPartitions)
	p := startPartition
	if p < 0 {
		p = 0
	}
	for i := int32(0); i < nPartitions; i++ {
		if p > 0 && int(p)%n == 0 {
			shift++
		}
		first := (int(p) + startIndex) % n
		replicas := []int32{bs[first]}
		for j := 0; j < int(replicationFactor)-1; j++ {
			replicas = append(replicas, bs[followerIndex(first, shift, j, n)])
		}
		out[p] = replicas
		p++
	}
	return out
}

// followerIndex is the broker index of the (j+2)-th replica: never the
// first replica's, since the shift is in 1..n-1.
func followerIndex(first, shift, j, n int) int {
	s := 1 + (shift+j)%(n-1)
	return (first + s) % n
}

// PartitionLeadership is the leader and ISR the controller assigns.
type PartitionLeadership struct {
	Leader      int32 // -1 = none (all eligible replicas offline)
	LeaderEpoch int32
	ISR         []int32
}

// NextLeadership decides a partition's leadership given its assigned
// replicas, the live brokers and its current state (nil for a new
// partition). It returns the new state and whether it changed (then the
// controller writes it and the leader epoch was bumped).
//
// Rules (Kafka ZK-mode controller):
//   - new partition: leader = first live replica, ISR = live replicas, epoch 0;
//   - current leader live and assigned: keep it; drop dead replicas from
//     the ISR (an ISR change bumps the epoch);
//   - otherwise elect the first assigned replica that is live and in the ISR
//     (OfflinePartitionLeaderElectionStrategy); ISR = old ISR ∩ live;
//   - no such replica: with unclean election the first live replica leads
//     with ISR = [it]; without it the partition has no leader (-1) and keeps
//     its ISR so a returning ISR member can lead again.
func NextLeadership(cur *PartitionLeadership, replicas []int32, live func(int32) bool, unclean bool) (PartitionLeadership, bool) {
	liveOf := func(ids []int32) []int32 {
		out := []int32{}
		for _, id := range ids {
			if live(id) {
				out = append(out, id)
			}
		}
		return out
	}
	if cur == nil {
		isr := liveOf(replicas)
		leader := int32(-1)
		if len(isr) > 0 {
			leader = isr[0]
		}
		return PartitionLeadership{Leader: leader, LeaderEpoch: 0, ISR: isr}, true
	}
	if cur.Leader >= 0 && live(cur.Leader) && contains(replicas, cur.Leader) {
		isr := liveOf(cur.ISR)
		if !contains(isr, cur.Leader) {
			isr = append([]int32{cur.Leader}, isr...)
		}
		if equal(isr, cur.ISR) {
			return *cur, false
		}
		return PartitionLeadership{Leader: cur.Leader, LeaderEpoch: cur.LeaderEpoch + 1, ISR: isr}, true
	}
	for _, r := range replicas {
		if live(r) && contains(cur.ISR, r) {
			return PartitionLeadership{Leader: r, LeaderEpoch: cur.LeaderEpoch + 1, ISR: liveOf(cur.ISR)}, true
		}
	}
	if unclean {
		if l := liveOf(replicas); len(l) > 0 {
			return PartitionLeadership{Leader: l[0], LeaderEpoch: cur.LeaderEpoch + 1, ISR: []int32{l[0]}}, true
		}
	}
	if cur.Leader == -1 {
		return *cur, false
	}
	return PartitionLeadership{Leader: -1, LeaderEpoch: cur.LeaderEpoch + 1, ISR: cur.ISR}, true
}

func contains(s []int32, x int32) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// MaxTopicNameLength is Kafka's limit (Topic.MAX_NAME_LENGTH): 249, so
// that "<topic>-<partition>" plus a deletion suffix fits a 255-byte file name.
const MaxTopicNameLength = 249

// ValidateTopicName applies Kafka's Topic.validate and returns the
// message Kafka sends with INVALID_TOPIC_EXCEPTION, or "" when legal.
func ValidateTopicName(name string) string {
	switch {
	case name == "":
		return "Topic name is illegal, it can't be empty"
	case name == "." || name == "..":
		return "Topic name cannot be \".\" or \"..\""
	case len(name) > MaxTopicNameLength:
		return fmt.Sprintf("Topic name is illegal, it can't be longer than %d characters, topic name: %s", MaxTopicNameLength, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Sprintf("Topic name \"%s\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return ""
}

// unifyCollision maps a topic name to its metric-name form: '.' and '_'
// are the same in Kafka's metric names, so "a.b" and "a_b" collide.
func unifyCollision(name string) string { return strings.ReplaceAll(name, ".", "_") }

// CheckReplicaAssignment validates a manual assignment for partitions
// first..first+len-1 (Kafka AdminZkClient.validateReplicaAssignment): ids
// consecutive, replica lists non-empty, without duplicates, all of size
// wantRF when wantRF > 0 (else all equal), every broker live. It returns
// the message for INVALID_REPLICA_ASSIGNMENT, or "" when valid.
func CheckReplicaAssignment(a map[int32][]int32, first int32, wantRF int, live func(int32) bool) string {
	ids := make([]int32, 0, len(a))
	for p := range a {
		ids = append(ids, p)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for i, p := range ids {
		if p != first+int32(i) {
			return fmt.Sprintf("Unexpected partition id %d: partitions should be a consecutive integer sequence starting at %d", p, first)
		}
	}
	for _, p := range ids {
		rs := a[p]
		if len(rs) == 0 {
			return fmt.Sprintf("Cannot have replication factor of 0 for partition id %d.", p)
		}
		if wantRF <= 0 {
			wantRF = len(rs)
		}
		if len(rs) != wantRF {
			return fmt.Sprintf("Inconsistent replication factor between partitions, partition %d has %d replicas, expected %d.", p, len(rs), wantRF)
		}
		seen := map[int32]bool{}
		for _, r := range rs {
			if seen[r] {
				return fmt.Sprintf("Duplicate replica assignment found: %d -> %v", p, rs)
			}
			seen[r] = true
			if !live(r) {
				return fmt.Sprintf("Unknown broker(s) in replica assignment: %d.", r)
			}
		}
	}
	return ""
}
