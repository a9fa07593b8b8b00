// Package replicaselector chooses the replica a consumer should fetch a
// partition from (KIP-392 follower fetching): Kafka's
// RackAwareReplicaSelector, the one replica.selector.class Gregor runs.
// It is pure: the Fetch handler gathers the candidates from the leader's
// partition View and the metadata snapshot.
package replicaselector

import "time"

// Replica is one candidate read replica (Kafka's ReplicaView): a live
// broker holding the partition.
type Replica struct {
	ID int32 // broker.id
	// Rack is the broker's broker.rack; nil when it has none.
	Rack *string
	// LogEndOffset is the replica's log end offset as the leader knows it
	// (the leader's own for the leader).
	LogEndOffset int64
	// SinceCaughtUp is how long ago the leader last knew the replica to
	// have every record it had (0 for the leader itself).
	SinceCaughtUp time.Duration
}

// RackAware is Kafka's RackAwareReplicaSelector.select: a client that
// names no rack (clientRack "") reads from the leader; otherwise the
// leader when it is in the client's rack or no candidate is, else the
// most caught-up candidate in the client's rack (highest log end offset,
// then most recently caught up, then highest broker id, Kafka's
// ReplicaView.comparator). candidates are the replicas besides the
// leader that may serve the fetch (Kafka: ISR members whose log holds the
// fetch offset); the leader among them is ignored. It returns the chosen
// broker id and whether it is not the leader (only then does the leader
// send it as preferred_read_replica).
func RackAware(clientRack string, leader Replica, candidates []Replica) (int32, bool) {
	if clientRack == "" || inRack(leader, clientRack) {
		return leader.ID, false
	}
	best, found := Replica{}, false
	for _, c := range candidates {
		if c.ID == leader.ID || !inRack(c, clientRack) {
			continue
		}
		if !found || better(c, best) {
			best, found = c, true
		}
	}
	if !found {
		return leader.ID, false
	}
	return best.ID, true
}

func inRack(r Replica, rack string) bool { return r.Rack != nil && *r.Rack == rack }

// better orders as Kafka's ReplicaView.comparator (max wins).
func better(a, b Replica) bool {
	if a.LogEndOffset != b.LogEndOffset {
		return a.LogEndOffset > b.LogEndOffset
	}
	if a.SinceCaughtUp != b.SinceCaughtUp {
		return a.SinceCaughtUp < b.SinceCaughtUp
	}
	return a.ID > b.ID
}
