package segment

import (
	"fmt"
	"math"

	"gregor/storage/record"
)

// CanHold reports whether a batch of size bytes with offsets up to
// lastOffset fits this segment's 32-bit positions and relative offsets.
func (s *Segment) CanHold(size int, lastOffset int64) bool {
	return s.Size()+int64(size) <= math.MaxInt32 && lastOffset-s.base <= math.MaxInt32 && lastOffset >= s.base
}

// Append writes one batch (already validated, offsets assigned; h is its
// header) at the end of the .log file and indexes it: an offset index entry
// once more than index.interval.bytes were appended since the last one, and
// a time index entry with the segment's running maximum timestamp at the
// same moment (Kafka's LogSegment.append). On a write error the file is cut
// back so that nothing of the batch remains.
func (s *Segment) Append(batch []byte, h record.Header) error {
	pos := s.Size()
	if !s.CanHold(len(batch), h.LastOffset()) {
		return fmt.Errorf("segment %d: batch [%d, %d] of %d bytes does not fit", s.base, h.BaseOffset, h.LastOffset(), len(batch))
	}
	f, err := s.Pin()
	if err != nil {
		return fmt.Errorf("append to segment %d: %w", s.base, err)
	}
	defer s.Unpin()
	if _, err := f.WriteAt(batch, pos); err != nil {
		_ = f.Truncate(pos)
		return fmt.Errorf("append to %s: %w", f.Name(), err)
	}
	s.unflushed = true
	return s.indexBatch(pos, h)
}

// indexBatch (pinned) updates the in-memory state and indexes for a batch written at
// pos, then publishes the new next offset and size, in that order.
func (s *Segment) indexBatch(pos int64, h record.Header) error {
	if h.MaxTimestamp > s.maxTs.Load() {
		s.maxTs.Store(h.MaxTimestamp)
		s.maxTsOffset.Store(h.LastOffset())
	}
	if s.firstTs.Load() == record.NoTimestamp && pos == 0 {
		s.firstTs.Store(h.MaxTimestamp)
	}
	var err error
	if s.bytesSinceIndex > int64(s.cfg.IndexIntervalBytes) {
		if err = s.index.Append(h.LastOffset(), int32(pos), int32(h.Size())); err == nil {
			var ti *TimeIndex
			if ti, err = s.timeIndex(); err == nil {
				ts, off := s.MaxTimestamp()
				err = ti.MaybeAppend(ts, off, false)
			}
		}
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += int64(h.Size())
	// The next offset goes out before the size that covers the batch: a
	// reader that loads Size and then NextOffset (Read) must never see the
	// new batch below its size with the old next offset, or it would skip
	// excluding batches at or past its upper bound and hand a consumer the
	// batch being appended, above the high watermark. (The other order a
	// reader may see, the new next offset with the old size, only costs
	// Read a header scan that finds nothing.)
	s.next.Store(h.NextOffset())
	s.size.Store(pos + int64(h.Size()))
	return err
}
