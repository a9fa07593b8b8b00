package segment

import (
	"gregor/storage/record"
)

// Find locates the batch containing offset: the first batch whose last
// offset is >= offset, searching below limit bytes (a committed size the
// caller snapshotted). Lookup: the offset index gives the start position,
// then batch headers are scanned. found is false when no such batch exists
// below limit.
func (s *Segment) Find(offset, limit int64) (pos int64, h record.Header, found bool, err error) {
	start := s.index.Lookup(offset)
	if start >= limit {
		start = 0
	}
	err = s.walkHeaders(start, limit, func(p int64, hh record.Header) bool {
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
func (s *Segment) Read(offset, upperBound, maxBytes int64, minOne bool) (Slice, error) {
	limit := s.Size()
	out := Slice{FirstOffset: -1}
	pos, _, found, err := s.Find(offset, limit)
	if err != nil || !found {
		return out, err
	}
	out.Pos = pos
	err = s.walkHeaders(pos, limit, func(p int64, h record.Header) bool {
		if h.LastOffset() >= upperBound {
			out.Stopped = true
			return false
		}
		if out.Len+int64(h.Size()) > maxBytes && !(minOne && out.Len == 0) {
			out.Stopped = true
			return false
		}
		if out.Len == 0 {
			out.FirstOffset = h.BaseOffset
		}
		out.Len += int64(h.Size())
		return true
	})
	return out, err
}

// ReadBatchAt reads the whole batch at pos (header h) into a new buffer.
func (s *Segment) ReadBatchAt(pos int64, h record.Header) ([]byte, error) {
	buf := make([]byte, h.Size())
	if _, err := s.log.ReadAt(buf, pos); err != nil {
		return nil, err
	}
	return buf, nil
}

// WalkFrom calls fn with each batch header from the batch containing
// offset to the end of the committed data; fn returns false to stop.
func (s *Segment) WalkFrom(offset int64, fn func(pos int64, h record.Header) bool) error {
	limit := s.Size()
	pos, _, found, err := s.Find(offset, limit)
	if err != nil || !found {
		return err
	}
	return s.walkHeaders(pos, limit, fn)
}

// TimeLookupOffset returns the offset from which to scan for the first
// record with timestamp >= ts (from the time index).
func (s *Segment) TimeLookupOffset(ts int64) int64 { return s.tindex.Lookup(ts) }
