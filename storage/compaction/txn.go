package compaction

import (
	"cmp"
	"slices"

	"gregor/storage/record"
	"gregor/storage/segment"
)

// TxnTracker follows the transactions of a log as a cleaning pass reads
// its batches in offset order (Kafka's CleanedTransactionMetadata): it
// says which data batches belong to an aborted transaction (their records
// go, and they never enter the offset map), which transaction markers no
// longer have data of their transaction in the log (they may go once
// their delete horizon passed), and which aborted transactions must stay
// in the cleaned segments' .txnindex (those whose ABORT marker is kept
// while some batch of the transaction is still there).
//
// The aborted transactions come from the .txnindex entries overlapping the
// section read (Log.CollectAbortedTxns); a transaction is "ongoing" for
// the tracker from the first batch read at or after its first offset to
// its marker. Committed transactions are those whose transactional
// batches no entry claims.
//
// Not safe for concurrent use: one pass owns it; a fresh one per pass and
// per phase (offset map, then filtering).
type TxnTracker struct {
	pending   []segment.AbortedTxn // by FirstOffset, consumed from the front
	aborted   map[int64]*abortedTxnState
	committed map[int64]bool // producers with a committed-transaction batch read since their last marker
	retained  []segment.AbortedTxn
}

type abortedTxnState struct {
	txn      segment.AbortedTxn
	observed bool // a data batch of the transaction was read in this pass
}

// NewTxnTracker returns a tracker knowing the aborted transactions
// aborted (any order; a transaction listed twice, as per-segment
// collections of a transaction spanning segments give, counts once).
func NewTxnTracker(aborted []segment.AbortedTxn) *TxnTracker {
	p := slices.Clone(aborted)
	slices.SortStableFunc(p, func(a, b segment.AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	return &TxnTracker{pending: p, aborted: map[int64]*abortedTxnState{}, committed: map[int64]bool{}}
}

// consumeUpTo makes the aborted transactions that began at or before
// offset ongoing (Kafka's consumeAbortedTxnsUpTo). A producer has one
// transaction at a time: an entry for a producer already ongoing is a
// duplicate and is dropped.
func (t *TxnTracker) consumeUpTo(offset int64) {
	n := 0
	for n < len(t.pending) && t.pending[n].FirstOffset <= offset {
		e := t.pending[n]
		if _, ok := t.aborted[e.ProducerID]; !ok {
			t.aborted[e.ProducerID] = &abortedTxnState{txn: e}
		}
		n++
	}
	t.pending = t.pending[n:]
}

// OnDataBatch records a data (non-control) batch read and reports whether
// it belongs to an aborted transaction: its records are to be removed
// (Kafka's onBatchRead). A non-transactional batch never is.
func (t *TxnTracker) OnDataBatch(h *record.Header) (aborted bool) {
	t.consumeUpTo(h.LastOffset())
	if !h.IsTransactional() {
		return false
	}
	if s, ok := t.aborted[h.ProducerID]; ok {
		s.observed = true
		return true
	}
	t.committed[h.ProducerID] = true
	return false
}

// OnControlBatch records a control batch read (m its decoded marker, ok
// false for a control batch the cleaner already emptied) and reports
// whether the transaction it ends has no data left in this pass, so the
// marker may be removed after its delete horizon (Kafka's
// onControlBatchRead):
//   - ABORT: discardable unless a batch of the aborted transaction was
//     read in this pass; a marker kept for such a batch keeps its
//     transaction in the cleaned .txnindex (TakeRetained);
//   - COMMIT: discardable unless a batch of the committed transaction was
//     read since the producer's previous marker;
//   - an emptied control batch: discardable; any other control type: kept.
func (t *TxnTracker) OnControlBatch(h *record.Header, m record.EndTxn, ok bool) (discardable bool) {
	t.consumeUpTo(h.LastOffset())
	if !ok {
		return true
	}
	switch m.Type {
	case record.ControlAbort:
		s, found := t.aborted[h.ProducerID]
		delete(t.aborted, h.ProducerID)
		if found && s.observed {
			t.retained = append(t.retained, s.txn)
			return false
		}
		return true
	case record.ControlCommit:
		had := t.committed[h.ProducerID]
		delete(t.committed, h.ProducerID)
		return !had
	default:
		return false
	}
}

// TakeRetained returns the aborted transactions whose ABORT marker was
// kept since the last call, in marker order: the .txnindex entries of the
// cleaned segment those markers were written to.
func (t *TxnTracker) TakeRetained() []segment.AbortedTxn {
	out := t.retained
	t.retained = nil
	return out
}
