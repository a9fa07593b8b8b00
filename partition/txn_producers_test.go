package partition

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage/record"
)

func txnHdr(pid int64, epoch int16, seq int32, n int32, base int64) record.Header {
	h := hdr(pid, epoch, seq, n, base)
	h.Attributes |= record.AttrTransactional
	return h
}

func markerHdr(pid int64, epoch int16, base int64) record.Header {
	return record.Header{BaseOffset: base, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, RecordCount: 1, Magic: 2,
		Attributes: record.AttrTransactional | record.AttrControl, MaxTimestamp: 77}
}

// apply checks and records a data batch, failing the test on a refusal.
func apply(t *testing.T, p *Producers, h record.Header) {
	t.Helper()
	if dup, err := p.Check(&h); err != nil || dup != nil {
		t.Fatalf("batch %+v: dup %v err %v", h, dup, err)
	}
	p.Update(&h, h.MaxTimestamp)
}

func TestProducersTransactions(t *testing.T) {
	p := NewProducers()
	// Producer 1 opens a transaction at 10, producer 2 at 13.
	apply(t, p, txnHdr(1, 0, 0, 3, 10))
	apply(t, p, txnHdr(2, 4, 0, 2, 13))
	apply(t, p, txnHdr(1, 0, 3, 1, 15)) // same transaction, not a new start
	if e := p.Entry(1); e.TxnFirstOffset != 10 {
		t.Fatalf("txn first offset %d, want 10", e.TxnFirstOffset)
	}
	if got := p.LastStableOffset(20); got != 10 {
		t.Fatalf("LSO %d, want 10 (producer 1's open transaction)", got)
	}
	if got := p.LastStableOffset(8); got != 8 {
		t.Fatalf("LSO %d, want the high watermark 8 below every transaction", got)
	}

	// A non-transactional batch inside the open transaction.
	h := hdr(1, 0, 4, 1, 16)
	if _, err := p.Check(&h); err != kerr.InvalidTxnState {
		t.Fatalf("non-transactional batch mid-transaction: %v, want INVALID_TXN_STATE", err)
	}
	// Fencing: an older epoch, for data and for a marker; an older coordinator.
	old := txnHdr(2, 3, 2, 1, 16)
	if _, err := p.Check(&old); err != kerr.InvalidProducerEpoch {
		t.Fatalf("older epoch: %v", err)
	}
	if err := p.CheckMarker(2, 3, 0); err != kerr.InvalidProducerEpoch {
		t.Fatalf("marker of an older epoch: %v", err)
	}

	// Producer 1 aborts (marker at 16): its abort entry's LSO is producer
	// 2's first offset; the LSO stays at 10 until the marker is below the HW.
	mh := markerHdr(1, 0, 16)
	if err := p.CheckMarker(1, 0, 5); err != nil {
		t.Fatal(err)
	}
	done, lso := p.ApplyMarker(&mh, record.EndTxn{Type: record.ControlAbort, CoordinatorEpoch: 5})
	if done == nil || *done != (CompletedTxn{ProducerID: 1, FirstOffset: 10, LastOffset: 16, Aborted: true}) || lso != 13 {
		t.Fatalf("completed %+v lso %d, want {1 10 16 aborted} 13", done, lso)
	}
	if got := p.LastStableOffset(16); got != 10 {
		t.Fatalf("LSO with the marker unreplicated %d, want 10", got)
	}
	if got := p.LastStableOffset(17); got != 13 {
		t.Fatalf("LSO after the marker is replicated %d, want 13", got)
	}
	if err := p.CheckMarker(1, 0, 4); err != kerr.TransactionCoordinatorFenced {
		t.Fatalf("marker of an older coordinator: %v", err)
	}
	// After the marker, producer 1 may write non-transactionally again.
	h = hdr(1, 0, 4, 1, 17)
	apply(t, p, h)

	// Producer 2 commits with a bumped epoch (coordinator abort on timeout
	// bumps it): its sequences restart at 0, its old epoch is fenced.
	mh = markerHdr(2, 5, 18)
	done, lso = p.ApplyMarker(&mh, record.EndTxn{Type: record.ControlCommit, CoordinatorEpoch: 5})
	if done == nil || done.Aborted || done.FirstOffset != 13 || lso != 19 {
		t.Fatalf("commit %+v lso %d", done, lso)
	}
	if got := p.LastStableOffset(19); got != 19 {
		t.Fatalf("LSO with nothing open %d, want 19", got)
	}
	bad := txnHdr(2, 5, 2, 1, 19)
	if _, err := p.Check(&bad); err != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("sequence 2 after the epoch bump: %v", err)
	}
	apply(t, p, txnHdr(2, 5, 0, 1, 19))
	if e := p.Entry(2); e.TxnFirstOffset != 19 || e.CoordinatorEpoch != 5 {
		t.Fatalf("entry %+v", e)
	}

	// A marker for a producer with no transaction here completes nothing.
	mh = markerHdr(9, 0, 20)
	if done, _ := p.ApplyMarker(&mh, record.EndTxn{Type: record.ControlAbort}); done != nil {
		t.Fatalf("empty transaction completed %+v", done)
	}
}

func TestProducersCoordinatorOriginBatch(t *testing.T) {
	p := NewProducers()
	// The group coordinator writes TxnOffsetCommit records with the
	// producer's id and epoch and no sequence: no sequence checks, but it
	// opens a transaction like any transactional batch.
	c := txnHdr(3, 2, -1, 1, 40)
	apply(t, p, c)
	c2 := txnHdr(3, 2, -1, 1, 41)
	apply(t, p, c2) // not a duplicate of the first
	if got := p.LastStableOffset(50); got != 40 {
		t.Fatalf("LSO %d, want 40", got)
	}
	older := txnHdr(3, 1, -1, 1, 42)
	if _, err := p.Check(&older); err != kerr.InvalidProducerEpoch {
		t.Fatalf("coordinator batch with an older epoch: %v", err)
	}
	// A non-transactional batch without a sequence is still refused.
	idem := hdr(3, 2, -1, 1, 42)
	if _, err := p.Check(&idem); err != kerr.InvalidRecord {
		t.Fatalf("idempotent batch without sequence: %v", err)
	}
}

func TestProducersExpire(t *testing.T) {
	p := NewProducers()
	old := hdr(1, 0, 0, 1, 0)
	old.MaxTimestamp = 1000
	p.Update(&old, old.MaxTimestamp)
	recent := hdr(2, 0, 0, 1, 1)
	p.Update(&recent, 5000)
	open := txnHdr(3, 0, 0, 1, 2)
	p.Update(&open, 1000) // old, but its transaction is open
	if n := p.Expire(6000, 4*time.Second); n != 1 || p.Entry(1) != nil || p.Entry(2) == nil || p.Entry(3) == nil {
		t.Fatalf("expired %d: producers 1 %v 2 %v 3 %v", n, p.Entry(1), p.Entry(2), p.Entry(3))
	}
	// Expired: a new batch is accepted at any sequence (KIP-360).
	h := hdr(1, 0, 7, 1, 3)
	if _, err := p.Check(&h); err != nil {
		t.Fatalf("expired producer writing again: %v", err)
	}
}
