package partition

import (
	"fmt"

	"go.uber.org/zap"

	"gregor/storage"
	"gregor/storage/record"
)

// TxnLog is the part of storage.Log the transaction state uses on top of
// Log: decoding markers while rebuilding producer state, and the aborted
// transaction index (.txnindex). StorageLog implements it; a Log without
// it (test stand-ins) keeps transactions and the last stable offset but
// lists no aborted transactions to read_committed fetches.
type TxnLog interface {
	// ScanTxnBatches is Log.ScanBatches with each control batch's marker
	// decoded (ok false for data batches).
	ScanTxnBatches(from int64, fn func(h record.Header, marker record.EndTxn, ok bool) bool) error
	// AppendAbortedTxn records an aborted transaction in the segment of
	// its marker; an entry already there is skipped.
	AppendAbortedTxn(e storage.AbortedTxn) error
	// CollectAbortedTxns lists the aborted transactions overlapping
	// [fetchOffset, upperBound).
	CollectAbortedTxns(fetchOffset, upperBound int64) []storage.AbortedTxn
}

var _ TxnLog = StorageLog{}

// unreplicatedPrune bounds the completed transactions a rebuild keeps as
// unreplicated before pruning them against the high watermark it starts
// from (a long log holds one per transaction).
const unreplicatedPrune = 1024

// rebuildProducers scans lg from its log start and rebuilds the producer
// and transaction state as appends built it (Kafka rebuilds it the same
// way when no snapshot is usable): data batches through Update, markers
// through ApplyMarker, and every aborted transaction found is recorded in
// the transaction index again (AppendAbortedTxn skips those already there,
// so an index entry lost with an unclean shutdown, or the segments a crash
// cut back, are repaired). hw (-1 unknown) is the high watermark the
// replica starts from: completed transactions whose marker is below it no
// longer hold the last stable offset back.
func rebuildProducers(lg Log, hw int64) (*Producers, error) {
	prod := NewProducers()
	tl, ok := lg.(TxnLog)
	if !ok {
		err := lg.ScanBatches(lg.LogStartOffset(), func(h record.Header) bool {
			if h.IsControl() {
				// The marker's type is unknown here: the transaction ends,
				// with nothing to index.
				prod.ApplyMarker(&h, record.EndTxn{Type: record.ControlAbort, CoordinatorEpoch: -1})
			} else {
				prod.Update(&h, h.MaxTimestamp)
			}
			return true
		})
		return prod, err
	}
	var ierr error
	err := tl.ScanTxnBatches(lg.LogStartOffset(), func(h record.Header, m record.EndTxn, isMarker bool) bool {
		if !h.IsControl() {
			prod.Update(&h, h.MaxTimestamp)
			return true
		}
		if !isMarker || !h.HasProducerID() {
			return true // an emptied control batch: nothing to apply (Kafka's ProducerAppendInfo.append)
		}
		done, lso := prod.ApplyMarker(&h, m)
		if done != nil && done.Aborted {
			if ierr = tl.AppendAbortedTxn(storage.AbortedTxn{ProducerID: done.ProducerID, FirstOffset: done.FirstOffset, LastOffset: done.LastOffset, LastStableOffset: lso}); ierr != nil {
				return false
			}
		}
		if len(prod.unreplicated) > unreplicatedPrune {
			prod.OnHighWatermark(hw)
		}
		return true
	})
	if err == nil {
		err = ierr
	}
	if err == nil {
		prod.OnHighWatermark(hw)
	}
	return prod, err
}

// applyBatch updates the producer state for one batch a follower
// appended (b is the whole batch): data batches through Update, markers
// through ApplyMarker with the aborted transaction indexed as the leader
// did (Kafka's follower runs the same ProducerAppendInfo, origin
// REPLICATION: nothing is refused).
func (a *partitionActor) applyBatch(h record.Header, b []byte) {
	if !h.IsControl() {
		a.core.prod.Update(&h, h.MaxTimestamp)
		return
	}
	if !h.HasProducerID() {
		return
	}
	m, ok, err := record.ReadEndTxn(h, b, 1<<20)
	if err != nil {
		a.log.Warn("follower: undecodable control batch, producer state not updated", zap.Stringer("partition", a.h.tp),
			zap.Int64("offset", h.BaseOffset), zap.Error(err))
		return
	}
	if !ok {
		return
	}
	done, lso := a.core.prod.ApplyMarker(&h, m)
	if done != nil && done.Aborted {
		a.recordAborted(storage.AbortedTxn{ProducerID: done.ProducerID, FirstOffset: done.FirstOffset, LastOffset: done.LastOffset, LastStableOffset: lso})
	}
}

// recordAborted writes an aborted transaction to the log's transaction
// index. A failure is an I/O failure of the partition's own log: the actor
// restarts, and the rebuild at start writes the entry again.
func (a *partitionActor) recordAborted(e storage.AbortedTxn) {
	tl, ok := a.lg.(TxnLog)
	if !ok {
		return
	}
	if err := tl.AppendAbortedTxn(e); err != nil {
		panic(fmt.Errorf("partition %s: transaction index: %w", a.h.tp, err))
	}
}
