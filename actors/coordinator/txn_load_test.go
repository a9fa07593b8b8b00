package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage/record"
)

// Loading transactional offsets: held per producer until its marker.

type logBuilder struct {
	t    *testing.T
	l    *Loader
	next int64
}

func (b *logBuilder) plain(group string, tp TopicPartition, off int64) {
	b.apply(&LogRecord{Key: OffsetKey(group, tp), Value: OffsetValue(OffsetAndMetadata{Offset: off, LeaderEpoch: -1, CommitTime: t0}), ProducerID: -1})
}

func (b *logBuilder) txn(pid int64, group string, tp TopicPartition, off int64) {
	b.apply(&LogRecord{Key: OffsetKey(group, tp), Value: OffsetValue(OffsetAndMetadata{Offset: off, LeaderEpoch: -1, CommitTime: t0}),
		ProducerID: pid, ProducerEpoch: 1, Transactional: true})
}

func (b *logBuilder) marker(pid int64, commit bool) {
	m := record.EndTxnMarker(commit, 0)
	b.apply(&LogRecord{Key: m.Key, Value: m.Value, ProducerID: pid, ProducerEpoch: 1, Transactional: true, Control: true})
}

func (b *logBuilder) apply(r *LogRecord) {
	b.t.Helper()
	r.Offset, r.BatchOffset = b.next, b.next
	b.next++
	if err := b.l.ApplyRecord(r); err != nil {
		b.t.Fatal(err)
	}
}

func TestLoaderHoldsTransactionalOffsetsUntilMarker(t *testing.T) {
	b := &logBuilder{t: t, l: NewLoader()}
	tp1 := TopicPartition{"in", 1}
	b.plain("g", tpA, 1)
	b.txn(7, "g", tpA, 2)  // committed below
	b.txn(8, "g", tp1, 3)  // aborted below
	b.txn(9, "g2", tpA, 4) // still open at the end
	b.txn(10, "g", tp1, 5) // committed, but a later plain commit wins
	b.plain("g", tp1, 6)
	b.marker(7, true)
	b.marker(8, false)
	b.marker(10, true)

	g := b.l.Groups["g"]
	if g == nil || g.Offsets[tpA].Offset != 2 || g.Offsets[tp1].Offset != 6 {
		t.Fatalf("group g %+v", g)
	}
	if len(g.PendingTxn) != 0 {
		t.Fatalf("g still has pending %v", g.PendingTxn)
	}
	// g2 exists with only an open transaction's offsets.
	g2 := b.l.Groups["g2"]
	if g2 == nil || len(g2.Offsets) != 0 || g2.PendingTxn[9][tpA].Offset != 4 || g2.PendingTxn[9][tpA].Position != 3 {
		t.Fatalf("group g2 %+v", g2)
	}
	open := b.l.OpenProducers()
	if len(open) != 1 || len(open[9]) != 1 || open[9][0] != "g2" {
		t.Fatalf("open producers %v, want 9: [g2]", open)
	}

	// Restored, g2 is an Empty group whose offset is unstable until the
	// marker reaches it (after the load, through CompleteTxn).
	rg := RestoreGroup("g2", testCfg(), nil, g2, t0)
	if !rg.Exists() || rg.State() != Empty {
		t.Fatalf("restored g2 exists %v state %v", rg.Exists(), rg.State())
	}
	if off, code := offsetOfTP(rg, tpA, true); off != -1 || code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("restored g2 require_stable %d/%d", off, code)
	}
	rg.CompleteTxn(9, true)
	if off, code := offsetOfTP(rg, tpA, true); off != 4 || code != 0 {
		t.Fatalf("restored g2 after commit %d/%d", off, code)
	}
	// A restored group keeps the positions: a transaction written before
	// the last plain commit does not override it.
	rgG := RestoreGroup("g", testCfg(), nil, g, t0)
	if rgG.offsetPos[tp1] != 5 {
		t.Fatalf("position of g's %v: %d, want 5", tp1, rgG.offsetPos[tp1])
	}
}

func TestLoaderTransactionalTombstoneAndAbortedOnlyGroup(t *testing.T) {
	b := &logBuilder{t: t, l: NewLoader()}
	b.txn(7, "g", tpA, 2)
	b.apply(&LogRecord{Key: OffsetKey("g", tpA), ProducerID: 7, ProducerEpoch: 1, Transactional: true}) // txn tombstone
	b.txn(8, "h", tpA, 3)
	b.marker(8, false)
	b.marker(7, true)
	if x := b.l.Groups["g"]; x != nil && len(x.Offsets) != 0 {
		t.Fatalf("g after a transactional tombstone: %+v", x)
	}
	if x := b.l.Groups["h"]; x != nil {
		t.Fatalf("a group with only an aborted transaction's offsets was loaded: %+v", x)
	}
}

// A group's own loader (a restarted group actor) skips other groups but
// still ends its transactions at the markers.
func TestGroupLoaderEndsTransactions(t *testing.T) {
	b := &logBuilder{t: t, l: NewGroupLoader("g")}
	b.txn(7, "g", tpA, 2)
	b.txn(7, "other", tpA, 3)
	b.marker(7, true)
	if x := b.l.Groups["g"]; x == nil || x.Offsets[tpA].Offset != 2 || len(x.PendingTxn) != 0 {
		t.Fatalf("g %+v", x)
	}
	if b.l.Groups["other"] != nil {
		t.Fatal("loaded another group")
	}
}
