package partition

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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

// rebuildProducers loads the newest producer snapshot of lg (SnapshotLog)
// and scans the batches after it — the whole log from its start when
// there is none — rebuilding the producer and transaction state as
// appends built it (Kafka's loadProducerState): data batches through Update, markers
// through ApplyMarker, and every aborted transaction found is recorded in
// the transaction index again (AppendAbortedTxn skips those already there,
// so an index entry an unclean shutdown lost above the snapshot is
// repaired; below it the segments were fsynced with their index at the
// roll that wrote it). hw (-1 unknown) is the high watermark the
// replica starts from: completed transactions whose marker is below it no
// longer hold the last stable offset back.
func rebuildProducers(lg Log, hw int64) (*Producers, error) {
	prod := NewProducers()
	from := lg.LogStartOffset()
	if sl, ok := lg.(SnapshotLog); ok {
		// The newest snapshot at or below the log end offset, then the
		// batches after it (Kafka's loadProducerState).
		off, found, err := sl.LatestProducerSnapshot(func(_ int64, data []byte) error {
			p, err := DecodeProducerSnapshot(data)
			if err == nil {
				prod = p
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if found {
			from = max(off, from)
		}
	}
	tl, ok := lg.(TxnLog)
	if !ok {
		err := lg.ScanBatches(from, func(h record.Header) bool {
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
	err := tl.ScanTxnBatches(from, func(h record.Header, m record.EndTxn, isMarker bool) bool {
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

// ProducerState is one active producer of a partition as DescribeProducers
// (KIP-664) reports it.
type ProducerState struct {
	ProducerID    int64
	ProducerEpoch int16
	LastSequence  int32 // -1 when the producer has no batch retained
	LastTimestamp int64 // ms, -1 when unknown
	// CoordinatorEpoch of the producer's last marker, -1 before any.
	CoordinatorEpoch int32
	// CurrentTxnStartOffset is the first offset of its open transaction, -1 when none.
	CurrentTxnStartOffset int64
}

// describeProducers asks the partition actor for its producer state.
type describeProducers struct {
	done chan []ProducerState // one slot
}

// DescribeProducers returns the partition's active producers (Kafka's
// UnifiedLog.activeProducers), read on the partition actor, which owns the
// state. It waits for the actor: call it off the connection's reader
// goroutine. Errors: NOT_LEADER_OR_FOLLOWER when no actor runs (or it
// stopped before answering), KAFKA_STORAGE_ERROR when offline,
// REQUEST_TIMED_OUT when the actor does not answer within
// ReplicationAskTimeout or ctx ends first.
func (h *Handle) DescribeProducers(ctx context.Context) ([]ProducerState, *kerr.Error) {
	if v := h.View(); v.Err != nil {
		return nil, v.Err
	}
	pid := h.pid.Load()
	if pid == nil {
		return nil, kerr.NotLeaderForPartition
	}
	m := &describeProducers{done: make(chan []ProducerState, 1)}
	h.root.Send(pid, m)
	t := time.NewTimer(replicationAskTimeout)
	defer t.Stop()
	select {
	case ps := <-m.done:
		return ps, nil
	case <-t.C:
		return nil, kerr.RequestTimedOut
	case <-ctx.Done():
		return nil, kerr.RequestTimedOut
	}
}

// describe answers a describeProducers on the actor.
func (a *partitionActor) describe(m *describeProducers) {
	var out []ProducerState
	a.core.prod.Each(func(id int64, e *ProducerEntry) {
		out = append(out, ProducerState{ProducerID: id, ProducerEpoch: e.Epoch, LastSequence: e.LastSeq(), LastTimestamp: e.LastTimestamp,
			CoordinatorEpoch: e.CoordinatorEpoch, CurrentTxnStartOffset: e.TxnFirstOffset})
	})
	slices.SortFunc(out, func(x, y ProducerState) int { return cmp.Compare(x.ProducerID, y.ProducerID) })
	m.done <- out
}
