package handlers

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/replication/metadata"
	"gregor/replication/replicaselector"
)

// Follower fetching (KIP-392), Kafka's ReplicaManager.findPreferredReadReplica
// and readFromLog:
//   - A consumer's Fetch v11+ carries client metadata (rack_id, the
//     listener it came in on). Such a fetch may read a partition from a
//     follower replica (Kafka's FetchParams.fetchOnlyLeader is false for
//     it): up to the follower's high watermark (the leader's as of its
//     last fetch, at most its own log end offset), its last stable offset
//     for read_committed, with the follower's offsets in the response and
//     its leader epoch checked against CurrentLeaderEpoch (older →
//     FENCED_LEADER_EPOCH, newer → UNKNOWN_LEADER_EPOCH); an offset past
//     its log end offset → OFFSET_OUT_OF_RANGE (the client goes back to
//     the leader). Consumers with older versions, followers and
//     ListOffsets still need the leader (NOT_LEADER_OR_FOLLOWER).
//   - With replica.selector.class RackAwareReplicaSelector, the leader
//     answers such a fetch that names a rack by running the selector
//     (replicaselector.RackAware) over itself and the in-sync followers
//     whose log end offset has reached the fetch offset and that are live
//     with the client's listener. When it picks a follower, the partition
//     carries PreferredReadReplica = that broker, the leader's high
//     watermark, last stable offset and log start offset, and no records;
//     the whole response is sent at once (no long poll), as Kafka's.
//     Without the selector, or when it picks the leader, PreferredReadReplica
//     is -1.
//   - Differences from Kafka: the leader does not know a follower's log
//     start offset, so a follower whose own retention deleted the fetch
//     offset may be chosen (it answers OFFSET_OUT_OF_RANGE and the client
//     goes back to the leader); an offset outside the leader's log gets
//     OFFSET_OUT_OF_RANGE from the leader before any selection.

// clientMetadata reports whether the request is a consumer fetch with
// KIP-392 client metadata (v11+, not from a broker).
func (s *fetchState) clientMetadata() bool {
	return s.req.Version >= 11 && s.req.ReplicaID < 0
}

// readsFromFollower: this fetch may read v, a follower replica.
func (s *fetchState) readsFromFollower(v *partition.View) bool {
	return s.clientMetadata() && v.Err == nil && v.Role == partition.RoleFollower && v.Log != nil
}

// preferredReplica is the broker the leader's replica selector points
// this consumer to for fp, when it is not the leader itself.
func (s *fetchState) preferredReplica(fp *fetchPart, v *partition.View, now time.Time) (int32, bool) {
	if s.b.Config == nil || s.b.Config.ReplicaSelector == "" || !s.clientMetadata() || s.req.Rack == "" || !v.IsLeader() || s.b.Topics == nil {
		return -1, false
	}
	if s.snap == nil {
		s.snap = s.b.Topics.Snapshot()
	}
	self := s.b.Config.BrokerID
	leader := replicaselector.Replica{ID: self, LogEndOffset: v.LogEndOffset}
	if br, ok := s.endpoint(self); ok {
		leader.Rack = br.Rack
	}
	var cands []replicaselector.Replica
	for _, f := range v.Followers {
		if !slices.Contains(v.ISR, f.ID) || f.LogEndOffset < fp.req.FetchOffset {
			continue // Kafka: only in-sync replicas that have the fetch offset
		}
		br, ok := s.endpoint(f.ID)
		if !ok {
			continue // not live, or no endpoint on the client's listener (Kafka's Node.noNode)
		}
		cands = append(cands, replicaselector.Replica{ID: f.ID, Rack: br.Rack, LogEndOffset: f.LogEndOffset, SinceCaughtUp: now.Sub(f.LastCaughtUp)})
	}
	return replicaselector.RackAware(s.req.Rack, leader, cands)
}

// endpoint is live broker id with an endpoint on the client's listener
// (Kafka's MetadataCache.getPartitionReplicaEndpoints).
func (s *fetchState) endpoint(id int32) (metadata.Broker, bool) {
	br, ok := s.snap.Broker(id)
	if !ok {
		return br, false
	}
	if _, has := br.Listeners[s.listener]; len(br.Listeners) > 0 && !has {
		return br, false
	}
	return br, true
}

// redirect fills fp's response to point the consumer to replica: the
// leader's offsets, no records (Kafka's readFromLog with a preferred read
// replica).
func (s *fetchState) redirect(fp *fetchPart, v *partition.View, replica int32) {
	out := fp.out
	*out = kmsg.NewFetchResponseTopicPartition()
	out.Partition = fp.req.Partition
	out.HighWatermark, out.LastStableOffset, out.LogStartOffset = v.HighWatermark, v.LastStableOffset, v.LogStartOffset
	out.PreferredReadReplica = replica
	out.RecordBatches = []byte{}
	fp.redirected = true
}
