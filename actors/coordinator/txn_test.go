package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Tests of transactional offset commits on the pure Group (Kafka's
// GroupMetadata pending transactional offsets).

var tpA = TopicPartition{"in", 0}

func txnReq(pid int64, off int64) TxnCommitRequest {
	return TxnCommitRequest{Producer: TxnProducer{ID: pid, Epoch: 3}, Generation: -1,
		Offsets: map[TopicPartition]OffsetAndMetadata{tpA: {Offset: off, LeaderEpoch: -1, CommitTime: t0}}}
}

func offsetOfTP(g *Group, tp TopicPartition, stable bool) (int64, int16) {
	f := g.fetchOffsets([]TopicPartition{tp}, stable)
	return f[0].Offset, f[0].ErrorCode
}

func TestTxnCommitPendingUntilMarker(t *testing.T) {
	st := &memStore{}
	g := NewGroup("g", testCfg(), st, t0)
	if c := g.TxnCommit(t0, txnReq(7, 42)); c != 0 {
		t.Fatalf("txn commit %d", c)
	}
	// Created Empty, written as a transactional batch of the producer.
	if !g.Exists() || g.State() != Empty || len(st.batches) != 1 {
		t.Fatalf("exists %v state %v batches %d", g.Exists(), g.State(), len(st.batches))
	}
	if p := st.batches[0].Producer; p == nil || p.ID != 7 || p.Epoch != 3 {
		t.Fatalf("batch producer %+v, want 7/3", p)
	}
	k, _ := DecodeKey(st.batches[0].Records[0].Key)
	v, _ := DecodeOffsetValue(st.batches[0].Records[0].Value)
	if k.Kind != KeyOffset || k.Group != "g" || k.TopicPartition != tpA || v.Offset != 42 {
		t.Fatalf("record %+v %+v", k, v)
	}
	// Invisible until the marker; require_stable says so.
	if off, code := offsetOfTP(g, tpA, false); off != -1 || code != 0 {
		t.Fatalf("before marker: offset %d code %d, want -1 and 0", off, code)
	}
	if off, code := offsetOfTP(g, tpA, true); off != -1 || code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("require_stable before marker: offset %d code %d, want UNSTABLE_OFFSET_COMMIT", off, code)
	}
	if g.CompleteTxn(8, true) {
		t.Fatal("another producer's marker completed producer 7's offsets")
	}
	if !g.CompleteTxn(7, true) {
		t.Fatal("commit marker found no pending offsets")
	}
	if off, code := offsetOfTP(g, tpA, true); off != 42 || code != 0 {
		t.Fatalf("after commit: offset %d code %d, want 42 and 0", off, code)
	}
	if g.CompleteTxn(7, true) {
		t.Fatal("a second marker found pending offsets")
	}
}

func TestTxnAbortKeepsPreviousCommit(t *testing.T) {
	g := NewGroup("g", testCfg(), &memStore{}, t0)
	if c := g.Commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tpA: {Offset: 10, LeaderEpoch: -1}}}); c != 0 {
		t.Fatal(c)
	}
	if c := g.TxnCommit(t0, txnReq(7, 20)); c != 0 {
		t.Fatal(c)
	}
	if off, _ := offsetOfTP(g, tpA, false); off != 10 {
		t.Fatalf("offset %d while the transaction is open, want the plain 10", off)
	}
	g.CompleteTxn(7, false)
	if off, code := offsetOfTP(g, tpA, true); off != 10 || code != 0 {
		t.Fatalf("after abort: %d/%d, want 10/0", off, code)
	}
	if len(g.PendingTxnProducers()) != 0 {
		t.Fatalf("pending producers %v after abort", g.PendingTxnProducers())
	}
}

// A plain commit written after the transactional one wins when the
// transaction commits; one written before loses (Kafka compares the
// records' log offsets).
func TestTxnCommitOrderedByLogPosition(t *testing.T) {
	plain := func(g *Group, off int64) {
		t.Helper()
		if c := g.Commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tpA: {Offset: off, LeaderEpoch: -1}}}); c != 0 {
			t.Fatal(c)
		}
	}
	g := NewGroup("g", testCfg(), &memStore{}, t0)
	g.TxnCommit(t0, txnReq(7, 20))
	plain(g, 30)
	g.CompleteTxn(7, true)
	if off, _ := offsetOfTP(g, tpA, false); off != 30 {
		t.Fatalf("offset %d, want the later plain commit 30", off)
	}

	g = NewGroup("g", testCfg(), &memStore{}, t0)
	plain(g, 30)
	g.TxnCommit(t0, txnReq(7, 20))
	g.CompleteTxn(7, true)
	if off, _ := offsetOfTP(g, tpA, false); off != 20 {
		t.Fatalf("offset %d, want the later transactional commit 20", off)
	}
}

func TestTxnCommitMembershipChecks(t *testing.T) {
	g := NewGroup("g", testCfg(), &memStore{}, t0)
	id, jb := joinNew(t, g, t0)
	g.Tick(g.NextDeadline())
	if jb.r == nil || jb.r.ErrorCode != 0 || g.State() != CompletingRebalance {
		t.Fatalf("join %+v state %v", jb.r, g.State())
	}
	req := func(member, inst string, gen int32) TxnCommitRequest {
		r := txnReq(7, 1)
		r.MemberID, r.InstanceID, r.Generation = member, inst, gen
		return r
	}
	cases := []struct {
		name string
		req  TxnCommitRequest
		want int16
	}{
		// v0–v2 carry no membership: accepted by a group with members
		// (unlike a plain commit), and in CompletingRebalance (no
		// REBALANCE_IN_PROGRESS for transactional commits).
		{"no membership", req("", "", -1), 0},
		{"member of the generation", req(id, "", 1), 0},
		{"stale generation", req(id, "", 0), kerr.IllegalGeneration.Code},
		{"unknown member", req("nobody", "", 1), kerr.UnknownMemberID.Code},
		{"unknown member, generation -1", req("nobody", "", -1), kerr.UnknownMemberID.Code},
		{"unknown static instance", req(id, "i-x", 1), kerr.UnknownMemberID.Code},
	}
	for _, c := range cases {
		if got := g.TxnCommit(t0, c.req); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}

	// A static member replaced by a new incarnation is fenced.
	g = NewGroup("g", testCfg(), &memStore{}, t0)
	jr := jreq("")
	jr.InstanceID, jr.Version = "i-a", 5
	var first joinBox
	g.Join(t0, jr, first.cb)
	g.Tick(t0)
	old := first.r.MemberID
	var again joinBox
	g.Join(t0, jr, again.cb) // the instance restarts: new member id
	if again.r == nil || again.r.MemberID == old {
		t.Fatalf("static rejoin %+v", again.r)
	}
	if c := g.TxnCommit(t0, req(old, "i-a", g.Generation())); c != kerr.FencedInstanceID.Code {
		t.Fatalf("old incarnation: %d, want FENCED_INSTANCE_ID", c)
	}
}

// An unknown group is created Empty by any TxnOffsetCommit, and stays
// even when the checks refuse the commit (Kafka adds it first).
func TestTxnCommitCreatesUnknownGroup(t *testing.T) {
	g := NewGroup("g", testCfg(), &memStore{}, t0)
	r := txnReq(7, 1)
	r.MemberID, r.Generation = "m", 4
	if c := g.TxnCommit(t0, r); c != kerr.UnknownMemberID.Code {
		t.Fatalf("commit naming a member of an unknown group: %d, want UNKNOWN_MEMBER_ID", c)
	}
	if !g.Exists() || g.State() != Empty {
		t.Fatalf("exists %v state %v, want an Empty group", g.Exists(), g.State())
	}
	// A plain commit with a generation would not create it.
	h := NewGroup("h", testCfg(), &memStore{}, t0)
	if c := h.Commit(t0, CommitRequest{MemberID: "m", Generation: 4, Offsets: map[TopicPartition]OffsetAndMetadata{tpA: {}}}); c != kerr.IllegalGeneration.Code || h.Exists() {
		t.Fatalf("plain commit: %d exists %v", c, h.Exists())
	}
}

func TestTxnCommitFailedAppendUnstages(t *testing.T) {
	st := &memStore{fail: kerr.NotLeaderForPartition}
	g := NewGroup("g", testCfg(), st, t0)
	if c := g.TxnCommit(t0, txnReq(7, 5)); c != kerr.NotCoordinator.Code {
		t.Fatalf("failed append: %d, want NOT_COORDINATOR", c)
	}
	if _, code := offsetOfTP(g, tpA, true); code != 0 || len(g.PendingTxnProducers()) != 0 {
		t.Fatalf("require_stable %d, pending %v after a failed append", code, g.PendingTxnProducers())
	}
}

// Deferred (the group actor's way): an offset whose append is in flight
// is pending; a marker meanwhile does not commit it (the marker cannot
// precede its record in the log).
func TestTxnCommitDeferredAppend(t *testing.T) {
	g := NewGroup("g", testCfg(), &memStore{}, t0)
	g.deferWrites()
	var res *commitResult
	g.txnCommit(t0, txnReq(7, 5), func(r commitResult) { res = &r })
	if res != nil {
		t.Fatal("answered before the append")
	}
	if _, code := offsetOfTP(g, tpA, true); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("in flight: %d, want UNSTABLE_OFFSET_COMMIT", code)
	}
	if n := complete(g, nil); n != 1 || res == nil || res.code != 0 || !res.accepted {
		t.Fatalf("%d appends, answer %+v", n, res)
	}
	// A second transaction's offset, in flight when its marker comes.
	g.txnCommit(t0, txnReq(8, 6), func(commitResult) {})
	g.CompleteTxn(8, true)
	complete(g, nil)
	g.CompleteTxn(7, true)
	if off, code := offsetOfTP(g, tpA, true); off != 5 || code != 0 {
		t.Fatalf("offset %d code %d, want producer 7's 5 only", off, code)
	}
}

func TestDeleteAndOffsetDeleteDropPendingTxnOffsets(t *testing.T) {
	// DeleteGroups of an Empty group with only open-transaction offsets.
	st := &memStore{}
	g := NewGroup("g", testCfg(), st, t0)
	g.TxnCommit(t0, txnReq(7, 5))
	before := len(st.recs)
	if c := g.Delete(t0); c != 0 || g.State() != Dead {
		t.Fatalf("delete %d state %v", c, g.State())
	}
	// Only the group's tombstone: the transaction's record is not its to
	// delete (Kafka tombstones committed offsets only).
	if got := st.recs[before:]; len(got) != 1 || got[0].Value != nil {
		t.Fatalf("tombstones %d", len(got))
	}
	if k, _ := DecodeKey(st.recs[before].Key); k.Kind != KeyGroup {
		t.Fatalf("tombstone of %+v, want the group's", k)
	}
	if g.CompleteTxn(7, true) {
		t.Fatal("a deleted group completed a transaction")
	}

	// OffsetDelete: the partition's pending offset goes too, so the
	// transaction's commit does not bring it back.
	g = NewGroup("g", testCfg(), &memStore{}, t0)
	tpB := TopicPartition{"in", 1}
	r := txnReq(7, 5)
	r.Offsets[tpB] = OffsetAndMetadata{Offset: 9, LeaderEpoch: -1}
	g.TxnCommit(t0, r)
	if top, codes := g.DeleteOffsets(t0, []TopicPartition{tpA}); top != 0 || codes[0] != 0 {
		t.Fatalf("offset delete %d %v", top, codes)
	}
	g.CompleteTxn(7, true)
	if off, _ := offsetOfTP(g, tpA, false); off != -1 {
		t.Fatalf("deleted partition came back at %d", off)
	}
	if off, _ := offsetOfTP(g, tpB, false); off != 9 {
		t.Fatalf("other partition %d, want 9", off)
	}
}

// An Empty group whose only offsets are an open transaction's does not
// expire to Dead (Kafka's hasOffsets counts them), and a deleted topic's
// pending offsets are dropped.
func TestExpiryAndDeletedTopicWithPendingTxnOffsets(t *testing.T) {
	cfg := testCfg()
	g := NewGroup("g", cfg, &memStore{}, t0)
	g.TxnCommit(t0, txnReq(7, 5))
	later := t0.Add(cfg.OffsetsRetention * 2)
	g.ExpireOffsets(later)
	if g.State() != Empty {
		t.Fatalf("state %v after expiry with an open transaction, want Empty", g.State())
	}
	n, err := g.RemoveTopicOffsets(later, map[string]bool{"in": true})
	if err != nil || n != 0 {
		t.Fatalf("removed %d (committed), err %v", n, err)
	}
	if g.State() != Dead {
		t.Fatalf("state %v once the deleted topic's pending offsets went, want Dead", g.State())
	}
}

// A TxnOffsetCommit without a producer id (-1) is stored as a plain
// commit (Kafka's storeOffsets with NO_PRODUCER_ID), after the
// transactional checks.
func TestTxnCommitWithoutProducerIsPlain(t *testing.T) {
	st := &memStore{}
	g := NewGroup("g", testCfg(), st, t0)
	if c := g.TxnCommit(t0, txnReq(-1, 8)); c != 0 {
		t.Fatal(c)
	}
	if st.batches[0].Producer != nil {
		t.Fatalf("batch producer %+v, want a plain batch", st.batches[0].Producer)
	}
	if off, code := offsetOfTP(g, tpA, true); off != 8 || code != 0 {
		t.Fatalf("offset %d code %d, want 8 at once", off, code)
	}
}
