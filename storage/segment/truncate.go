package segment

import (
	"fmt"

	"gregor/storage/record"
)

// TruncateTo removes every batch whose last offset is >= offset (so the
// batch containing offset goes too, as in Kafka's LogSegment.truncateTo)
// and the index entries pointing at them. It returns the bytes removed.
// Readers holding regions past the cut read short; callers truncate only
// above what readers may be sent (the high watermark).
//
// A sealed segment is made writable for the cut and sealed again (its
// index files trimmed); the log activates the segment a truncation ends in
// before cutting it, so that is the rare case of a direct caller.
func (s *Segment) TruncateTo(offset int64) (removed int64, err error) {
	s.fmu.Lock()
	wasWritable := s.writable
	s.fmu.Unlock()
	if err := s.Activate(); err != nil {
		return 0, err
	}
	f, err := s.Pin()
	if err != nil {
		return 0, err
	}
	defer func() {
		s.Unpin()
		if !wasWritable {
			if serr := s.setWritable(false); err == nil {
				err = serr
			}
		}
	}()
	size := s.Size()
	pos, h, found, err := s.findFrom(offset, 0, size)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, nil
	}
	if err := s.index.TruncateToPos(pos); err != nil {
		return 0, err
	}
	ti, err := s.timeIndex()
	if err != nil {
		return 0, err
	}
	if err := ti.TruncateToOffset(h.BaseOffset); err != nil {
		return 0, err
	}
	if err := s.txn.TruncateTo(h.BaseOffset); err != nil {
		return 0, err
	}
	if err := f.Truncate(pos); err != nil {
		return 0, fmt.Errorf("truncate %s: %w", f.Name(), err)
	}
	s.size.Store(pos)
	s.next.Store(h.BaseOffset)
	if pos == 0 {
		s.next.Store(s.base)
	}
	s.unflushed = true
	// Recompute the timestamps and the index interval counter from what is left.
	s.maxTs.Store(record.NoTimestamp)
	s.maxTsOffset.Store(-1)
	s.firstTs.Store(record.NoTimestamp)
	lastIndexed := s.index.lastPos()
	s.bytesSinceIndex = 0
	err = s.walkHeaders(0, pos, func(p int64, hh record.Header) bool {
		if p == 0 {
			s.firstTs.Store(hh.MaxTimestamp)
		}
		if hh.MaxTimestamp > s.maxTs.Load() {
			s.maxTs.Store(hh.MaxTimestamp)
			s.maxTsOffset.Store(hh.LastOffset())
		}
		if p >= lastIndexed {
			s.bytesSinceIndex = p + int64(hh.Size()) - lastIndexed
		}
		return true
	})
	return size - pos, err
}
