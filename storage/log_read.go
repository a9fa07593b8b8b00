package storage

import (
	"errors"
	"fmt"

	"gregor/storage/record"
	"gregor/storage/segment"
)

// maxAcquireRetries bounds how often a read retries after losing a race
// with retention or truncation (the segment it looked at was closed).
const maxAcquireRetries = 64

// errStop ends a record walk early.
var errStop = errors.New("stop")

// Read returns whole record batches as file regions for a fetch: starting
// at the batch that contains offset (so the first batch may begin before
// offset), none whose last offset is >= upperBound (the high watermark for
// consumers, the log end offset for followers), at most maxBytes in total
// except that at least one batch is returned even when it is larger
// (KIP-74). Regions may span several segments. The caller must call
// Release on the result once sent.
//
// Cost: a binary search over the segments, then per segment touched the
// offset index and a few header preads bounded by index.interval.bytes
// (segment.Segment.Read) — independent of maxBytes and of how many batches
// are returned.
//
// offset == upperBound or == LogEndOffset gives an empty FetchData and nil.
// Errors: ErrOffsetOutOfRange when offset < LogStartOffset or offset >
// LogEndOffset; ErrLogClosed; *record.CorruptError when the segment data
// does not parse.
func (l *Log) Read(offset, maxBytes, upperBound int64) (FetchData, error) {
	for attempt := 0; attempt < maxAcquireRetries; attempt++ {
		if l.closed.Load() {
			return FetchData{FirstOffset: -1}, ErrLogClosed
		}
		leo := l.leo.Load()
		sl := l.segs.Load()
		if offset < l.start.Load() || offset > leo {
			return FetchData{FirstOffset: -1}, fmt.Errorf("%w: %d not in [%d, %d] of %s", ErrOffsetOutOfRange, offset, l.start.Load(), leo, l.tp)
		}
		upperBound = min(upperBound, leo)
		if offset >= upperBound {
			return NewFetchData(nil, -1, nil), nil
		}
		fd, retry, err := l.readFrom(sl, offset, maxBytes, upperBound)
		if !retry {
			return fd, err
		}
	}
	return FetchData{FirstOffset: -1}, fmt.Errorf("%s: read at %d kept racing with segment deletion", l.tp, offset)
}

// readFrom collects regions from the snapshot sl; retry is true when a
// segment was closed under it (take a new snapshot).
func (l *Log) readFrom(sl *segList, offset, maxBytes, upperBound int64) (fd FetchData, retry bool, err error) {
	i := sl.find(offset)
	if i < 0 {
		i = 0
	}
	// held segments are referenced and pinned: their .log descriptors stay
	// open (the file cache defers closing them) until the FetchData is
	// released, so sendfile from Region.File is safe even if retention
	// deletes the segment meanwhile.
	var held []*segment.Segment
	release := func() {
		for _, s := range held {
			s.Unpin()
			s.Release()
		}
	}
	var regions []Region
	first := int64(-1)
	var total int64
	var lastSeg *segment.Segment
	var lastEnd int64
	for ; i < len(sl.segs); i++ {
		s := sl.segs[i]
		if s.BaseOffset() >= upperBound {
			break
		}
		if !s.Acquire() {
			release()
			return FetchData{}, true, nil
		}
		f, err := s.Pin()
		if err != nil {
			s.Release()
			release()
			if errors.Is(err, segment.ErrSegmentClosed) {
				return FetchData{}, true, nil // deleted under us: take a new list
			}
			return FetchData{FirstOffset: -1}, false, err
		}
		held = append(held, s)
		part, err := s.Read(offset, upperBound, maxBytes-total, len(regions) == 0)
		if err != nil {
			release()
			return FetchData{FirstOffset: -1}, false, err
		}
		if part.Len > 0 {
			lastSeg, lastEnd = s, part.Pos+part.Len
			regions = append(regions, Region{File: f, Pos: part.Pos, Len: part.Len})
			total += part.Len
			if first < 0 {
				first = part.FirstOffset
			}
		}
		if part.Stopped {
			break
		}
		offset = max(offset, s.NextOffset())
	}
	fd = NewFetchData(regions, first, release)
	fd.lastSeg, fd.lastEnd = lastSeg, lastEnd
	return fd, false, nil
}

// ScanBatches calls fn with each batch header in offset order, from the
// batch containing from to the log end; fn returns false to stop (producer
// state rebuild, tools). Errors: ErrOffsetOutOfRange when from is outside
// [LogStartOffset, LogEndOffset]; *record.CorruptError.
func (l *Log) ScanBatches(from int64, fn func(h record.Header) bool) error {
	for attempt := 0; attempt < maxAcquireRetries; attempt++ {
		sl := l.segs.Load()
		if from < l.start.Load() || from > l.leo.Load() {
			return fmt.Errorf("%w: %d", ErrOffsetOutOfRange, from)
		}
		retry, err := l.scanFrom(sl, from, fn)
		if !retry {
			return err
		}
	}
	return fmt.Errorf("%s: scan kept racing with segment deletion", l.tp)
}

func (l *Log) scanFrom(sl *segList, from int64, fn func(h record.Header) bool) (retry bool, err error) {
	return l.scanPosFrom(sl, from, func(_ *segment.Segment, _ int64, h record.Header) (bool, error) { return fn(h), nil })
}

// scanPosFrom is scanFrom giving fn the segment and position of each
// batch (to read it whole); an error from fn ends the scan with it.
func (l *Log) scanPosFrom(sl *segList, from int64, fn func(s *segment.Segment, pos int64, h record.Header) (bool, error)) (retry bool, err error) {
	i := max(sl.find(from), 0)
	stopped := false
	for ; i < len(sl.segs) && !stopped; i++ {
		s := sl.segs[i]
		if !s.Acquire() {
			return true, nil
		}
		var fnErr error
		err := s.WalkFrom(max(from, s.BaseOffset()), func(pos int64, h record.Header) bool {
			ok, ferr := fn(s, pos, h)
			if ferr != nil || !ok {
				fnErr, stopped = ferr, true
				return false
			}
			from = h.NextOffset()
			return true
		})
		s.Release()
		if err == nil {
			err = fnErr
		}
		if errors.Is(err, segment.ErrSegmentClosed) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
	return false, nil
}

// ScanTxnBatches is ScanBatches that also decodes the marker of every
// control batch (one pread of the batch each; data batches cost only
// their header): marker.ok is false for a data batch or an empty control
// batch. It is what rebuilding a partition's producer and transaction
// state reads. Errors: as ScanBatches, plus decoding errors of a control
// batch (*record.CorruptError, *record.InvalidError, record.ErrBadControlRecord).
func (l *Log) ScanTxnBatches(from int64, fn func(h record.Header, marker record.EndTxn, ok bool) bool) error {
	cfg := l.cfg.Load()
	for attempt := 0; attempt < maxAcquireRetries; attempt++ {
		sl := l.segs.Load()
		if from < l.start.Load() || from > l.leo.Load() {
			return fmt.Errorf("%w: %d", ErrOffsetOutOfRange, from)
		}
		retry, err := l.scanPosFrom(sl, from, func(s *segment.Segment, pos int64, h record.Header) (bool, error) {
			if !h.IsControl() {
				return fn(h, record.EndTxn{}, false), nil
			}
			b, err := s.ReadBatchAt(pos, h)
			if err != nil {
				return false, err
			}
			m, ok, err := record.ReadEndTxn(h, b, maxUncompressed(cfg))
			if err != nil {
				return false, fmt.Errorf("%s: control batch at %d: %w", l.tp, h.BaseOffset, err)
			}
			return fn(h, m, ok), nil
		})
		if !retry {
			return err
		}
	}
	return fmt.Errorf("%s: scan kept racing with segment deletion", l.tp)
}

// OffsetForTimestamp answers ListOffsets for a timestamp: the earliest
// offset (>= LogStartOffset) whose record timestamp is >= ts, and that
// record's timestamp; found is false when no record qualifies. It uses the
// segments' maximum timestamps, then the time index, then decodes the
// candidate batches. Errors: *record.CorruptError / *record.InvalidError for
// undecodable batches; ErrLogClosed.
func (l *Log) OffsetForTimestamp(ts int64) (offset, timestamp int64, found bool, err error) {
	for attempt := 0; attempt < maxAcquireRetries; attempt++ {
		if l.closed.Load() {
			return -1, -1, false, ErrLogClosed
		}
		sl := l.segs.Load()
		start := l.start.Load()
		var retry bool
		offset, timestamp, found, retry, err = l.offsetForTimestamp(sl, start, ts)
		if !retry {
			return offset, timestamp, found, err
		}
	}
	return -1, -1, false, fmt.Errorf("%s: timestamp lookup kept racing with segment deletion", l.tp)
}

func (l *Log) offsetForTimestamp(sl *segList, start, ts int64) (offset, timestamp int64, found, retry bool, err error) {
	cfg := l.cfg.Load()
	for _, s := range sl.segs {
		if mts, _ := s.MaxTimestamp(); mts < ts || s.NextOffset() <= start {
			continue
		}
		if !s.Acquire() {
			return -1, -1, false, true, nil
		}
		lookup, err := s.TimeLookupOffset(ts)
		if err != nil {
			s.Release()
			if errors.Is(err, segment.ErrSegmentClosed) {
				return -1, -1, false, true, nil
			}
			return -1, -1, false, false, err
		}
		from := max(lookup, start, s.BaseOffset())
		var walkErr error
		err = s.WalkFrom(from, func(pos int64, h record.Header) bool {
			if h.MaxTimestamp < ts {
				return true
			}
			b, rerr := s.ReadBatchAt(pos, h)
			if rerr != nil {
				walkErr = rerr
				return false
			}
			walkErr = record.Records(h, b, maxUncompressed(cfg), func(r *record.Record) error {
				if o := r.Offset(&h); o >= start && r.Timestamp(&h) >= ts {
					offset, timestamp, found = o, r.Timestamp(&h), true
					return errStop
				}
				return nil
			})
			if errors.Is(walkErr, errStop) {
				walkErr = nil
			}
			return !found && walkErr == nil
		})
		s.Release()
		if err == nil {
			err = walkErr
		}
		if errors.Is(err, segment.ErrSegmentClosed) {
			return -1, -1, false, true, nil
		}
		if err != nil || found {
			return offset, timestamp, found, false, err
		}
	}
	return -1, -1, false, false, nil
}

// OffsetOfMaxTimestamp answers ListOffsets with timestamp -3 (KIP-734): the
// offset and timestamp of the record with the largest timestamp in the log,
// the earliest such record on ties; (-1, -1) when the log has no
// timestamped record.
func (l *Log) OffsetOfMaxTimestamp() (offset, timestamp int64) {
	for attempt := 0; attempt < maxAcquireRetries; attempt++ {
		sl := l.segs.Load()
		var best *segment.Segment
		bestTs := record.NoTimestamp
		for _, s := range sl.segs {
			if ts, _ := s.MaxTimestamp(); ts > bestTs {
				best, bestTs = s, ts
			}
		}
		if best == nil {
			return -1, -1
		}
		// The earliest record carrying bestTs in that segment.
		off, ts, found, retry, err := l.offsetForTimestamp(&segList{segs: []*segment.Segment{best}}, l.start.Load(), bestTs)
		if retry {
			continue
		}
		if err != nil || !found {
			_, batchLast := best.MaxTimestamp()
			return batchLast, bestTs
		}
		return off, ts
	}
	return -1, -1
}
