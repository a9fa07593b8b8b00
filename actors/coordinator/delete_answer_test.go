package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// committedGroup is a group used only for commits, offset 5 of tp stored
// in st (which fails later appends once st.fail is set).
func committedGroup(t *testing.T) (*Group, *memStore, TopicPartition) {
	t.Helper()
	st := &memStore{}
	g := NewGroup("g", testCfg(), st, t0)
	tp := TopicPartition{Topic: "t", Partition: 0}
	if code := g.Commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 5, LeaderEpoch: -1}}}); code != 0 {
		t.Fatal(code)
	}
	return g, st, tp
}

// DeleteGroups whose tombstone append times out: the group is already gone
// (Dead, offsets dropped), so the answer is NONE, as Kafka's
// handleDeleteGroups gives once the group is marked Dead (the tombstones
// are appended with acks=0 by cleanupGroupMetadata); a retry finds no
// group.
func TestDeleteGroupAnswersNoneWhenTombstonesFail(t *testing.T) {
	g, st, tp := committedGroup(t)
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
	g, st, tp := committedGroup(t)
	st.fail = kerr.NotEnoughReplicas
	top, codes := g.DeleteOffsets(t0, []TopicPartition{tp})
	if top != 0 || len(codes) != 1 || codes[0] != 0 {
		t.Fatalf("OffsetDelete answered %v %v, want NONE for the group and the partition", kerr.ErrorForCode(top), codes)
	}
	if got := g.FetchOffsets([]TopicPartition{tp}); got[0].Offset != -1 {
		t.Fatalf("offset %d after OffsetDelete, want -1", got[0].Offset)
	}
}

// Through the group actor: DeleteGroups is answered NONE while its
// tombstones' append is still held (the answer does not wait for a
// best-effort append), and when that append then fails the group stays
// deleted: no offsets, a second DeleteGroups finds no group.
func TestDeleteGroupsAnsweredBeforeItsTombstonesLand(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	if code := commit(t, c, "g", "", -1, "orders", 0, 5); code != 0 {
		t.Fatalf("commit %d", code)
	}
	release := topic.HoldAppends()
	defer release(nil)
	ch, reply := chanOf[int16]()
	deleteNow(c, "g", reply)
	if code := wait(t, ch); code != 0 {
		t.Fatalf("DeleteGroups answered %v, want NONE", kerr.ErrorForCode(code))
	}
	awaitHeld(t, topic, 1) // the tombstones
	release(kerr.NotEnoughReplicas)
	if r := fetchAll(t, c, "g"); r.ErrorCode != 0 || len(r.Topics) != 0 {
		t.Fatalf("OffsetFetch after delete: code %d, %d topics, want none", r.ErrorCode, len(r.Topics))
	}
	deleteNow(c, "g", reply)
	if code := wait(t, ch); code != kerr.GroupIDNotFound.Code {
		t.Fatalf("second DeleteGroups answered %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(code))
	}
}
