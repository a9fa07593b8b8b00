package segment

import (
	"os"

	"gregor/storage/record"
)

// Find locates the batch containing offset: the first batch whose last
// offset is >= offset, searching below limit bytes (a committed size the
// caller snapshotted). Lookup: the offset index gives the start position,
// then batch headers are scanned. found is false when no such batch exists
// below limit.
func (s *Segment) Find(offset, limit int64) (pos int64, h record.Header, found bool, err error) {
	err = s.withPin(func(*os.File) error {
		pos, h, found, err = s.findFrom(offset, 0, limit)
		return err
	})
	return pos, h, found, err
}

// findFrom (pinned) is Find knowing that the batch lies at or after position from
// (a batch boundary): the scan starts at the later of from and the offset
// index's entry, so it covers at most about index.interval.bytes plus one
// batch.
func (s *Segment) findFrom(offset, from, limit int64) (pos int64, h record.Header, found bool, err error) {
	start, unknownEnd := s.index.lookupBelow(offset, limit)
	if start < from {
		start, unknownEnd = from, false
	}
	err = s.walkHeaders(start, limit, func(p int64, hh record.Header) bool {
		if unknownEnd {
			s.index.learnEnd(p, p+int64(hh.Size()))
			unknownEnd = false
		}
		if hh.LastOffset() >= offset {
			pos, h, found = p, hh, true
			return false
		}
		return true
	})
	return pos, h, found, err
}

// Slice is a read of whole batches from one segment. Plain value.
type Slice struct {
	Pos, Len    int64 // byte range of the .log file
	FirstOffset int64 // base offset of the first batch, -1 when Len == 0
	// Stopped is true when the read ended because of maxBytes or
	// upperBound (so the caller must not continue into the next segment).
	Stopped bool
}

// Read collects whole batches starting at the batch that contains offset:
// none whose last offset is >= upperBound, and at most maxBytes in total,
// except that when minOne is set the first batch is returned even if it is
// larger (KIP-74). It reads only below the committed size at call time.
//
// Cost: no walk over the returned batches. Each end of the range is found
// from the in-memory offset index and a header scan over at most about
// index.interval.bytes plus one batch: the start (the batch containing
// offset), the upper bound (the batch containing upperBound, skipped when
// upperBound is at or past the segment's next offset) and the byte bound
// (the last batch boundary at most maxBytes past the start, scanned from
// the nearest indexed position below it). Index entries also remember
// where their batch ends (in memory), so with batches larger than
// index.interval.bytes (each one indexed) the start costs one header
// pread and the byte bound none. So a read costs at most a few small
// preads whatever maxBytes is, like Kafka's LogSegment.read, which also
// finds the start through the index — but unlike Kafka, which sends
// min(maxBytes, end) bytes and leaves a trailing partial batch for the
// client to drop, Gregor keeps whole batches (in-process readers such as
// the __consumer_offsets loader parse the regions).
func (s *Segment) Read(offset, upperBound, maxBytes int64, minOne bool) (Slice, error) {
	if _, err := s.Pin(); err != nil {
		return Slice{FirstOffset: -1}, err
	}
	defer s.Unpin()
	limit := s.Size()
	empty := Slice{FirstOffset: -1}
	pos, first, found, err := s.findFrom(offset, 0, limit)
	if err != nil || !found {
		return empty, err
	}
	if first.LastOffset() >= upperBound {
		empty.Stopped = true
		return empty, nil
	}
	out := Slice{Pos: pos, FirstOffset: first.BaseOffset}
	end := limit
	// NextOffset is loaded after limit: Append publishes a batch's next
	// offset before the size that covers it, so this next offset is at
	// least that of every batch below limit.
	if upperBound < s.NextOffset() {
		// The batch containing upperBound is excluded, with all after it.
		// It lies past the first batch (whose last offset is below
		// upperBound); when it is past limit (appended after the size
		// snapshot) everything below limit qualifies.
		hp, _, found, err := s.findFrom(upperBound, pos+int64(first.Size()), limit)
		if err != nil {
			return Slice{FirstOffset: -1}, err
		}
		if found {
			end, out.Stopped = hp, true
		}
	}
	if end-pos > maxBytes {
		cut, err := s.lastBoundary(pos, pos+maxBytes, end)
		if err != nil {
			return Slice{FirstOffset: -1}, err
		}
		if cut == pos {
			if !minOne {
				empty.Stopped = true
				return empty, nil
			}
			cut = pos + int64(first.Size()) // KIP-74: the first batch whole
		}
		if cut < end {
			end, out.Stopped = cut, true
		}
	}
	out.Len = end - pos
	return out, nil
}

// lastBoundary (pinned) returns the last batch boundary in [from, target], scanning
// headers below end (a batch boundary past target) from the nearest indexed
// position at or below target; from when no batch starting at from ends by
// target. When the indexed batch nearest below target ends past it, the
// answer needs no read at all.
func (s *Segment) lastBoundary(from, target, end int64) (int64, error) {
	if target < from {
		return from, nil
	}
	cut, exact, unknownEnd := s.index.boundaryBelow(target)
	if exact && cut >= from {
		return cut, nil
	}
	if cut < from {
		cut, unknownEnd = from, false
	}
	err := s.walkHeaders(cut, end, func(p int64, h record.Header) bool {
		if unknownEnd {
			s.index.learnEnd(p, p+int64(h.Size()))
			unknownEnd = false
		}
		if p+int64(h.Size()) > target {
			return false
		}
		cut = p + int64(h.Size())
		return true
	})
	return cut, err
}

// ReadBatchAt reads the whole batch at pos (header h) into a new buffer.
func (s *Segment) ReadBatchAt(pos int64, h record.Header) ([]byte, error) {
	buf := make([]byte, h.Size())
	err := s.withPin(func(f *os.File) error {
		_, err := f.ReadAt(buf, pos)
		return err
	})
	if err != nil {
		return nil, err
	}
	return buf, nil
}

// WalkFrom calls fn with each batch header from the batch containing
// offset to the end of the committed data; fn returns false to stop.
// The segment stays pinned during the walk.
func (s *Segment) WalkFrom(offset int64, fn func(pos int64, h record.Header) bool) error {
	return s.withPin(func(*os.File) error {
		limit := s.Size()
		pos, _, found, err := s.findFrom(offset, 0, limit)
		if err != nil || !found {
			return err
		}
		return s.walkHeaders(pos, limit, fn)
	})
}

// TimeLookupOffset returns the offset from which to scan for the first
// record with timestamp >= ts (from the time index). Errors: Pin's.
func (s *Segment) TimeLookupOffset(ts int64) (int64, error) {
	var off int64
	err := s.withPin(func(*os.File) error {
		ti, err := s.timeIndex()
		if err == nil {
			off = ti.Lookup(ts)
		}
		return err
	})
	return off, err
}
