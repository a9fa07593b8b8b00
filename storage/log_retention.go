package storage

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"gregor/storage/segment"
)

// DeleteRecordsBefore advances the log start offset to offset (the
// DeleteRecords API, KIP-107) and deletes the segments wholly below it:
// those whose next segment starts at or below offset. As in Kafka, the
// active segment stays (with its bytes) however far offset goes; it goes
// once a later segment follows it. No-op when offset <= LogStartOffset.
// The partition layer bounds offset by the high watermark. Errors:
// ErrOffsetOutOfRange when offset > LogEndOffset; ErrLogClosed; I/O
// errors.
func (l *Log) DeleteRecordsBefore(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrLogClosed
	}
	if offset > l.leo.Load() {
		return fmt.Errorf("%w: delete records before %d beyond log end offset %d", ErrOffsetOutOfRange, offset, l.leo.Load())
	}
	if offset <= l.start.Load() {
		return nil
	}
	l.start.Store(offset)
	if err := l.epochs.truncateFromStart(offset); err != nil {
		return err
	}
	_, err := l.deleteOldSegmentsLocked(time.Now(), belowStart(offset), "log start offset")
	return err
}

// retain runs one retention pass over the log (Kafka's deleteOldSegments):
// unless cleanup.policy lacks "delete": segments breaching retention.ms (by their largest timestamp, or file
// modification time when they hold none), then retention.bytes, then
// segments wholly below the log start offset. Only whole segments that
// lie wholly below the high watermark (when known) go; the active one
// too when retention takes it (not when empty), the log then rolling
// first so that one segment remains, as Kafka's deleteSegments does.
// It also completes deletions whose file.delete.delay.ms has passed.
func (l *Log) retain(now time.Time) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return 0, nil
	}
	l.deleteDueLocked(now)
	cfg := l.cfg.Load()
	total := 0
	if cfg.RetentionMs >= 0 && !cfg.DeleteDisabled {
		cutoff := now.UnixMilli() - cfg.RetentionMs
		n, err := l.deleteOldSegmentsLocked(now, func(s *segment.Segment, _ int64, _ bool) bool {
			ts, _ := s.MaxTimestamp()
			if ts < 0 {
				ts = s.LastModified().UnixMilli()
			}
			return ts < cutoff
		}, "retention.ms")
		total += n
		if err != nil {
			return total, err
		}
	}
	if cfg.RetentionBytes >= 0 && !cfg.DeleteDisabled {
		diff := l.Size() - cfg.RetentionBytes
		n, err := l.deleteOldSegmentsLocked(now, func(s *segment.Segment, _ int64, _ bool) bool {
			if diff-s.Size() >= 0 {
				diff -= s.Size()
				return true
			}
			return false
		}, "retention.bytes")
		total += n
		if err != nil {
			return total, err
		}
	}
	start := l.start.Load()
	n, err := l.deleteOldSegmentsLocked(now, belowStart(start), "log start offset")
	return total + n, err
}

// belowStart is Kafka's deleteLogStartOffsetBreachedSegments predicate:
// a segment is below the log start offset when a next segment starts at
// or below it; the active segment never is.
func belowStart(start int64) func(*segment.Segment, int64, bool) bool {
	return func(_ *segment.Segment, next int64, hasNext bool) bool { return hasNext && next <= start }
}

// deleteOldSegmentsLocked removes the longest prefix of segments for
// which pred(segment, upper, hasNext) holds (Kafka's deletableSegments
// then deleteSegments): upper is the next segment's base offset, or the
// log end offset for the active segment (hasNext false). A segment
// reaching past the high watermark stays, as does an empty active
// segment or one of a log whose high watermark is not known yet. When every segment goes, the log first rolls a new empty
// active segment at the log end offset, so one always remains. The log
// start offset then advances to the first kept segment.
func (l *Log) deleteOldSegmentsLocked(now time.Time, pred func(s *segment.Segment, upper int64, hasNext bool) bool, reason string) (int, error) {
	cfg := l.cfg.Load()
	sl := l.segs.Load()
	hw, leo := l.hw.Load(), l.leo.Load()
	n := 0
	for n < len(sl.segs) {
		s, hasNext, upper := sl.segs[n], n+1 < len(sl.segs), leo
		if hasNext {
			upper = sl.segs[n+1].BaseOffset()
		}
		// The active segment only below a known high watermark: until the
		// partition sets it (hw -1 after open) its records may not all be
		// committed, and a new follower's would be lost for good.
		if (!hasNext && (s.Size() == 0 || hw < 0)) || (hw >= 0 && upper > hw && l.start.Load() < upper) || !pred(s, upper, hasNext) {
			break
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if n == len(sl.segs) {
		if _, err := l.rollLocked(cfg, leo); err != nil {
			return 0, err
		}
		sl = l.segs.Load()
	}
	doomed := sl.segs[:n]
	keep := append([]*segment.Segment(nil), sl.segs[n:]...)
	// The new log start offset goes out before the segment list without
	// the doomed segments: Read loads the list and then checks the start,
	// so a reader that already sees the shorter list also sees the start
	// that makes an offset in a doomed segment OFFSET_OUT_OF_RANGE, and is
	// not served the first kept segment's records instead.
	first := keep[0].BaseOffset()
	advance := l.start.Load() < first
	if advance {
		l.start.Store(first)
	}
	l.publish(keep)
	if advance {
		if err := l.epochs.truncateFromStart(first); err != nil {
			return n, err
		}
	}
	var bytes int64
	for _, s := range doomed {
		bytes += s.Size()
		if err := s.RenameWithSuffix(segment.DeletedSuffix); err != nil {
			l.logger.Warn("renaming segment for deletion", zap.Error(err))
		}
		l.pending = append(l.pending, pendingDelete{seg: s, due: now.Add(time.Duration(cfg.FileDeleteDelayMs) * time.Millisecond)})
	}
	l.logger.Info("deleting segments", zap.String("reason", reason), zap.Int("segments", n),
		zap.Int64("bytes", bytes), zap.Int64("log_start_offset", l.start.Load()))
	l.deleteDueLocked(now)
	return n, nil
}

// deleteDueLocked unlinks segments whose file.delete.delay.ms has passed.
func (l *Log) deleteDueLocked(now time.Time) {
	keep := l.pending[:0]
	for _, p := range l.pending {
		if now.Before(p.due) {
			keep = append(keep, p)
			continue
		}
		if err := p.seg.DeleteFiles(); err != nil {
			l.logger.Warn("deleting segment files", zap.Int64("base_offset", p.seg.BaseOffset()), zap.Error(err))
		}
		p.seg.Release()
	}
	for i := len(keep); i < len(l.pending); i++ {
		l.pending[i] = pendingDelete{}
	}
	l.pending = keep
}
