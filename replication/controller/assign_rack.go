package controller

import (
	"errors"
	"math/rand/v2"
	"sort"
)

// BrokerRack is a broker id with its broker.rack ("" = none), as the
// controller reads it from /brokers/ids/<id>.
type BrokerRack struct {
	ID   int32
	Rack string
}

// ErrIncompleteRacks is AdminUtils' refusal when some brokers have a
// broker.rack and others do not (a CreateTopics answers it as Kafka's
// ZooKeeper-mode broker does: UNKNOWN_SERVER_ERROR with this message).
var ErrIncompleteRacks = errors.New("Not all brokers have rack information for replica rack aware assignment.")

// AssignReplicasWithRacks is Kafka's AdminUtils.assignReplicasToBrokers:
// rack-unaware (AssignReplicas) when no broker has a rack; otherwise
// rack-aware: the brokers are listed alternating over the racks (sorted by
// rack, then id), the first replica goes round-robin over that list and
// each further replica takes the next broker at the growing shift, skipping
// one whose rack already holds a replica while some rack holds none, and one
// that already holds a replica while some broker holds none. With as many
// replicas as racks every rack gets one. startIndex, startPartition and the
// result are as AssignReplicas'; brokers must hold at least
// replicationFactor entries. Errors: ErrIncompleteRacks.
func AssignReplicasWithRacks(brokers []BrokerRack, nPartitions int32, replicationFactor int16, startIndex int, startPartition int32) (map[int32][]int32, error) {
	ids := make([]int32, len(brokers))
	withRack := 0
	for i, b := range brokers {
		ids[i] = b.ID
		if b.Rack != "" {
			withRack++
		}
	}
	if withRack == 0 {
		return AssignReplicas(ids, nPartitions, replicationFactor, startIndex, startPartition), nil
	}
	if withRack < len(brokers) {
		return nil, ErrIncompleteRacks
	}
	rackOf := make(map[int32]string, len(brokers))
	for _, b := range brokers {
		rackOf[b.ID] = b.Rack
	}
	arranged := rackAlternated(rackOf)
	numRacks := len(distinctRacks(rackOf))
	n := len(arranged)
	shift := startIndex
	if startIndex < 0 {
		startIndex = rand.IntN(n)
		shift = rand.IntN(n)
	}
	out := make(map[int32][]int32, nPartitions)
	p := max(startPartition, 0)
	for i := int32(0); i < nPartitions; i++ {
		if p > 0 && int(p)%n == 0 {
			shift++
		}
		first := (int(p) + startIndex) % n
		leader := arranged[first]
		replicas := []int32{leader}
		racks := map[string]bool{rackOf[leader]: true}
		used := map[int32]bool{leader: true}
		k := 0
		for j := 1; j < int(replicationFactor); j++ {
			for {
				b := arranged[followerIndex(first, shift*numRacks, k, n)]
				k++
				r := rackOf[b]
				if (!racks[r] || len(racks) == numRacks) && (!used[b] || len(used) == n) {
					replicas = append(replicas, b)
					racks[r], used[b] = true, true
					break
				}
			}
		}
		out[p] = replicas
		p++
	}
	return out, nil
}

func distinctRacks(rackOf map[int32]string) []string {
	set := map[string]bool{}
	for _, r := range rackOf {
		set[r] = true
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// rackAlternated is AdminUtils.getRackAlternatedBrokerList: one broker of
// each rack in rack order, then the next of each, brokers of a rack in id
// order: racks a:{0,3} b:{1} c:{2,4} → 0,1,2,3,4.
func rackAlternated(rackOf map[int32]string) []int32 {
	byRack := map[string][]int32{}
	for id, r := range rackOf {
		byRack[r] = append(byRack[r], id)
	}
	for _, ids := range byRack {
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	}
	racks := distinctRacks(rackOf)
	out := make([]int32, 0, len(rackOf))
	for i := 0; len(out) < len(rackOf); i++ {
		r := racks[i%len(racks)]
		if ids := byRack[r]; len(ids) > 0 {
			out = append(out, ids[0])
			byRack[r] = ids[1:]
		}
	}
	return out
}
