package storage

// The partition's aborted transaction index, spread over its segments'
// .txnindex files: written by the partition actor after an ABORT marker
// is appended, read by read_committed fetches.

// AppendAbortedTxn records an aborted transaction in the .txnindex of the
// segment holding its ABORT marker (e.LastOffset). The partition actor
// calls it after appending the marker, and again for every abort it finds
// when it rebuilds its state at start: an entry already recorded is
// skipped, so a rebuild only re-adds what an unclean shutdown lost.
// Errors: ErrLogClosed, ErrOffsetOutOfRange (the marker's segment is gone
// or not written yet), I/O errors.
func (l *Log) AppendAbortedTxn(e AbortedTxn) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrLogClosed
	}
	sl := l.segs.Load()
	i := sl.find(e.LastOffset)
	if i < 0 || e.LastOffset >= l.leo.Load() {
		return ErrOffsetOutOfRange
	}
	return sl.segs[i].AppendAbortedTxn(e)
}

// CollectAbortedTxns lists the aborted transactions that overlap
// [fetchOffset, upperBound) (Kafka's UnifiedLog.collectAbortedTransactions):
// from the segment holding fetchOffset on (a transaction ending before it
// cannot overlap), stopping at the first entry whose last stable offset
// reaches upperBound. Safe from any goroutine.
func (l *Log) CollectAbortedTxns(fetchOffset, upperBound int64) []AbortedTxn {
	sl := l.segs.Load()
	var out []AbortedTxn
	for i := max(sl.find(fetchOffset), 0); i < len(sl.segs); i++ {
		// A later segment may hold the marker of a transaction that began
		// below upperBound: only an entry's last stable offset ends the search.
		var done bool
		if out, done = sl.segs[i].CollectAbortedTxns(out, fetchOffset, upperBound); done {
			break
		}
	}
	return out
}
