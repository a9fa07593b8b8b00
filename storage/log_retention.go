package storage

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"gregor/storage/segment"
)

// DeleteRecordsBefore advances the log start offset to offset (the
// DeleteRecords API, KIP-107) and deletes the segments wholly below it.
// When offset equals the log end offset the active segment is rolled first
// so it can go too. No-op when offset <= LogStartOffset. The partition layer
// bounds offset by the high watermark. Errors: ErrOffsetOutOfRange when
// offset > LogEndOffset; ErrLogClosed; I/O errors.
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
	_, err := l.deleteOldSegmentsLocked(time.Now(), func(s *segment.Segment, next int64) bool { return next <= offset }, "log start offset")
	return err
}

// retain runs one retention pass over the log (Kafka's deleteOldSegments):
// unless cleanup.policy lacks "delete": segments breaching retention.ms (by their largest timestamp, or file
// modification time when they hold none), then retention.bytes, then
// segments wholly below the log start offset. Only whole segments that
// are not active and lie wholly below the high watermark (when known) go.
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
		n, err := l.deleteOldSegmentsLocked(now, func(s *segment.Segment, _ int64) bool {
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
		n, err := l.deleteOldSegmentsLocked(now, func(s *segment.Segment, _ int64) bool {
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
	n, err := l.deleteOldSegmentsLocked(now, func(_ *segment.Segment, next int64) bool { return next <= start }, "log start offset")
	return total + n, err
}

// deleteOldSegmentsLocked removes the longest prefix of segments for which
// pred(segment, its next segment's base offset) holds, never the active
// segment nor a segment reaching past the high watermark, then advances
// the log start offset to the new first segment. When the predicate also
// holds for a non-empty active segment lying wholly below the log start
// offset (DeleteRecordsBefore(LogEndOffset)), the log rolls first.
func (l *Log) deleteOldSegmentsLocked(now time.Time, pred func(s *segment.Segment, next int64) bool, reason string) (int, error) {
	cfg := l.cfg.Load()
	sl := l.segs.Load()
	if act := sl.active(); act.Size() > 0 && l.start.Load() >= l.leo.Load() && pred(act, l.leo.Load()) {
		if _, err := l.rollLocked(cfg, l.leo.Load()); err != nil {
			return 0, err
		}
		sl = l.segs.Load()
	}
	hw := l.hw.Load()
	n := 0
	for n < len(sl.segs)-1 {
		next := sl.segs[n+1].BaseOffset()
		if (hw >= 0 && next > hw && l.start.Load() < next) || !pred(sl.segs[n], next) {
			break
		}
		n++
	}
	if n == 0 {
		return 0, nil
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
