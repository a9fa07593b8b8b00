package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// DeleteGroups whose tombstone append times out: the group is already gone
// (Dead, offsets dropped), so the answer is NONE, as Kafka's
// handleDeleteGroups gives once the group is marked Dead (the tombstones
// are appended with acks=0 by cleanupGroupMetadata); a retry finds no
// group.
func TestDeleteGroupAnswersNoneWhenTombstonesFail(t *testing.T) {
	st := &memStore{}
	g := NewGroup("g", testCfg(), st, t0)
	tp := TopicPartition{Topic: "t", Partition: 0}
	if code := g.Commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 5, LeaderEpoch: -1}}}); code != 0 {
		t.Fatal(code)
	}
	st.fail = kerr.RequestTimedOut
	if code := g.Delete(t0); code != 0 || g.State() != Dead {
		t.Fatalf("DeleteGroups answered %v, group state %v; want NONE and Dead", kerr.ErrorForCode(code), g.State())
	}
	if again := g.Delete(t0); again != kerr.GroupIDNotFound.Code {
		t.Fatalf("retry answered %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(again))
	}
	if got := g.FetchOffsets([]TopicPartition{tp}); got[0].Offset != -1 {
		t.Fatalf("offset %d after delete, want -1", got[0].Offset)
	}
}

// OffsetDelete whose tombstone append fails: the offset has left the cache,
// so the partition is answered NONE (Kafka's handleDeleteOffsets), and
// OffsetFetch shows nothing committed.
func TestOffsetDeleteAnswersNoneWhenTombstonesFail(t *testing.T) {
	st := &memStore{}
	g := NewGroup("g", testCfg(), st, t0)
	tp := TopicPartition{Topic: "t", Partition: 0}
	if code := g.Commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 5, LeaderEpoch: -1}}}); code != 0 {
		t.Fatal(code)
	}
	st.fail = kerr.NotEnoughReplicas
	top, codes := g.DeleteOffsets(t0, []TopicPartition{tp})
	if top != 0 || len(codes) != 1 || codes[0] != 0 {
		t.Fatalf("OffsetDelete answered %v %v, want NONE for the group and the partition", kerr.ErrorForCode(top), codes)
	}
	if got := g.FetchOffsets([]TopicPartition{tp}); got[0].Offset != -1 {
		t.Fatalf("offset %d after OffsetDelete, want -1", got[0].Offset)
	}
}
