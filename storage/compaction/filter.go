package compaction

import (
	"encoding/binary"
	"fmt"

	"gregor/storage/record"
)

// FilterOptions are the facts FilterBatch decides with. Plain value.
type FilterOptions struct {
	// Map holds the latest offset of every key of the dirty section; a
	// record survives when its key is absent or its offset is >= the
	// map's (Kafka's "isLatestValue").
	Map *OffsetMap
	// NowMs is the cleaner's clock, ms since the epoch.
	NowMs int64
	// DeleteRetentionMs: delete.retention.ms. A batch that keeps tombstones
	// and has no delete horizon yet is stamped with horizon NowMs +
	// DeleteRetentionMs (KIP-534); its tombstones go in the first pass
	// after that horizon.
	DeleteRetentionMs int64
	// RetainEmpty is asked when every record of a batch with a producer id
	// goes (a marker past its horizon included), and for a batch already
	// empty: true keeps the batch as an empty header (same offsets,
	// producer id, epoch, sequence range, transactional and control bits)
	// so the producer's state survives, as Kafka does for the last batch of
	// each producer; false drops it. nil = never.
	RetainEmpty func(h *record.Header) bool
	// MaxUncompressed bounds decompression of one batch (bytes).
	MaxUncompressed int
	// Txns follows the log's transactions through the pass (FilterBatch
	// must then see every batch of the section in offset order): records
	// of aborted transactions go, and markers whose transaction has no
	// data left go after their delete horizon. nil: control batches are
	// copied unchanged and transactional records compacted like any.
	Txns *TxnTracker
}

// BatchStats counts what FilterBatch did to one batch.
type BatchStats struct {
	RecordsRead, RecordsKept int
	TombstonesDropped        int
	// Rewritten: the output is a rebuilt batch (not the input bytes).
	Rewritten bool
	// Dropped: the whole batch went (nothing was appended).
	Dropped bool
	// AbortedDropped counts the records removed because their batch
	// belongs to an aborted transaction.
	AbortedDropped int
	// MarkerDropped: a control batch (transaction marker) was removed
	// or emptied after its delete horizon.
	MarkerDropped bool
}

// FilterBatch appends to dst the cleaned form of one batch (header h, as
// parsed from batch) and returns the extended slice (Kafka's
// MemoryRecords.filterTo with the LogCleaner's RecordFilter):
//   - with opts.Txns, a data batch of an aborted transaction loses every
//     record; a control batch (transaction marker) is kept unchanged while
//     its transaction still has data in the log, and once it has none it
//     is stamped with a delete horizon (NowMs + DeleteRetentionMs, KIP-534)
//     and removed in the first pass at or after that horizon. Without
//     opts.Txns control batches are copied unchanged;
//   - records without a key are dropped (Kafka counts them invalid on a
//     compacted topic), as are records superseded by a later offset of the
//     same key, and tombstones (null value) of a batch whose delete horizon
//     has been reached;
//   - a batch keeping everything, with no new delete horizon to record, is
//     copied byte for byte;
//   - otherwise the batch is rebuilt with record.BuildBatch keeping the base
//     offset, offset deltas and lastOffsetDelta (so offsets are never
//     reused or shifted), every record's timestamp, the leader epoch, codec,
//     timestamp type, transactional and control bits and producer
//     id/epoch/base sequence; a batch keeping tombstones or an emptied
//     transaction's marker gets the delete-horizon attribute and its
//     baseTimestamp set to the horizon (record deltas re-based so
//     timestamps stay);
//   - a batch losing every record vanishes, unless RetainEmpty says keep it
//     as an empty batch (for a producer's last batch, marker included).
//
// Errors: *record.InvalidError / *record.CorruptError for an undecodable
// batch, record.ErrBadControlRecord for an undecodable marker, or a
// builder error; dst is returned unchanged then.
func FilterBatch(dst, batch []byte, h record.Header, opts FilterOptions) ([]byte, BatchStats, error) {
	var st BatchStats
	horizon, hasHorizon := h.DeleteHorizonMs()
	// Kafka keeps a tombstone while now < horizon, and drops a marker once
	// horizon <= now.
	expired := hasHorizon && opts.NowMs >= horizon
	discard, emptyTxnMarker := false, false
	if opts.Txns != nil {
		if h.IsControl() {
			m, ok, err := record.ReadEndTxn(h, batch, opts.MaxUncompressed)
			if err != nil {
				return dst, st, fmt.Errorf("compaction: control batch at offset %d: %w", h.BaseOffset, err)
			}
			emptyTxnMarker = opts.Txns.OnControlBatch(&h, m, ok)
			discard = emptyTxnMarker && expired
		} else {
			discard = opts.Txns.OnDataBatch(&h)
		}
	}
	retainEmpty := func() bool { return h.HasProducerID() && opts.RetainEmpty != nil && opts.RetainEmpty(&h) }
	if h.IsControl() {
		switch {
		case opts.Txns == nil:
			return append(dst, batch...), st, nil
		case h.RecordCount == 0 || discard:
			st.MarkerDropped = h.RecordCount > 0
			if !retainEmpty() {
				st.Dropped = true
				return dst, st, nil
			}
			if h.RecordCount == 0 {
				return append(dst, batch...), st, nil
			}
		case !emptyTxnMarker || hasHorizon:
			return append(dst, batch...), st, nil
		}
	}
	var recs []kept
	tombstones := 0
	err := record.Records(h, batch, opts.MaxUncompressed, func(r *record.Record) error {
		st.RecordsRead++
		if discard {
			if !h.IsControl() {
				st.AbortedDropped++
			}
			return nil
		}
		if h.IsControl() {
			// A marker whose transaction has no data left: kept, with a
			// new delete horizon (the switch above left only that case).
			recs = append(recs, copyRecord(r, h.BaseTimestamp))
			return nil
		}
		if r.Key == nil {
			return nil
		}
		off := r.Offset(&h)
		if latest, ok := opts.Map.Get(r.Key); ok && off < latest {
			return nil
		}
		if r.Value == nil {
			if expired {
				st.TombstonesDropped++
				return nil
			}
			tombstones++
		}
		recs = append(recs, copyRecord(r, h.BaseTimestamp))
		return nil
	})
	if err != nil {
		return dst, st, err
	}
	st.RecordsKept = len(recs)
	if len(recs) == 0 && !retainEmpty() {
		// An empty batch kept for its producer goes too once it is no
		// longer that producer's last (Kafka's DELETE_EMPTY).
		st.Dropped = true
		return dst, st, nil
	}
	setHorizon := (tombstones > 0 || emptyTxnMarker) && !hasHorizon && len(recs) > 0
	if len(recs) == int(h.RecordCount) && st.RecordsRead == len(recs) && !setHorizon {
		return append(dst, batch...), st, nil
	}
	base := h.BaseTimestamp
	markHorizon := hasHorizon && len(recs) > 0 && tombstones > 0
	if setHorizon {
		base, markHorizon = opts.NowMs+opts.DeleteRetentionMs, true
	}
	bopts := record.BatchOptions{
		BaseOffset:           h.BaseOffset,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		BaseTimestamp:        base,
		LogAppendTime:        h.IsLogAppendTime(),
		AppendTime:           h.MaxTimestamp,
		Codec:                h.Codec(),
		Transactional:        h.IsTransactional(),
		Control:              h.IsControl(),
		KeepOffsetDeltas:     true,
		LastOffsetDelta:      h.LastOffsetDelta,
	}
	if h.ProducerID != record.NoProducerID || h.ProducerEpoch != -1 || h.BaseSequence != record.NoSequence {
		bopts.Producer = &record.Producer{ID: h.ProducerID, Epoch: h.ProducerEpoch, BaseSequence: h.BaseSequence}
	}
	brs := make([]record.BatchRecord, len(recs))
	for i, k := range recs {
		brs[i] = record.BatchRecord{Key: k.key, Value: k.value, Headers: k.headers, TimestampDelta: k.ts - base, OffsetDelta: k.delta}
	}
	start := len(dst)
	out, err := record.AppendBatch(dst, bopts, brs)
	if err != nil {
		return dst, st, fmt.Errorf("compaction: rebuilding batch at offset %d: %w", h.BaseOffset, err)
	}
	b := out[start:]
	if markHorizon {
		attrs := binary.BigEndian.Uint16(b[record.OffAttributes:]) | record.AttrDeleteHorizonSet
		binary.BigEndian.PutUint16(b[record.OffAttributes:], attrs)
	}
	if len(recs) == 0 || h.IsLogAppendTime() {
		// An empty batch keeps the original maxTimestamp (what the time
		// index saw); LogAppendTime batches carry it as the append time.
		binary.BigEndian.PutUint64(b[record.OffMaxTimestamp:], uint64(h.MaxTimestamp))
	}
	binary.BigEndian.PutUint32(b[record.OffCRC:], record.ComputeCRC(b))
	st.Rewritten = true
	return out, st, nil
}

// kept is a record FilterBatch keeps, copied out of the decode buffer.
type kept struct {
	key, value []byte
	headers    []record.RecordHeader
	ts         int64 // absolute, ms
	delta      int32
}

// copyRecord copies r (whose slices alias a decode buffer valid only in
// the Records callback) with its absolute timestamp (base + delta).
func copyRecord(r *record.Record, baseTs int64) kept {
	k := kept{key: append([]byte{}, r.Key...), ts: baseTs + r.TimestampDelta, delta: r.OffsetDelta}
	if r.Key == nil {
		k.key = nil
	}
	if r.Value != nil {
		k.value = append([]byte{}, r.Value...)
	}
	for _, hd := range r.Headers {
		rh := record.RecordHeader{Key: append([]byte{}, hd.Key...)}
		if hd.Value != nil {
			rh.Value = append([]byte{}, hd.Value...)
		}
		k.headers = append(k.headers, rh)
	}
	return k
}
