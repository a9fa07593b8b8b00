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
func (s *Segment) TruncateTo(offset int64) (int64, error) {
	size := s.Size()
	pos, h, found, err := s.Find(offset, size)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, nil
	}
	if err := s.index.TruncateToPos(pos); err != nil {
		return 0, err
	}
	if err := s.tindex.TruncateToOffset(h.BaseOffset); err != nil {
		return 0, err
	}
	if err := s.txn.TruncateTo(h.BaseOffset); err != nil {
		return 0, err
	}
	if err := s.log.Truncate(pos); err != nil {
		return 0, fmt.Errorf("truncate %s: %w", s.logPath, err)
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
	var lastIndexed int64
	s.index.mu.RLock()
	if n := len(s.index.entries); n > 0 {
		lastIndexed = int64(s.index.entries[n-1].pos)
	}
	s.index.mu.RUnlock()
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
