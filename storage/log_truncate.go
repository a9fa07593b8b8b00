package storage

import (
	"fmt"

	"go.uber.org/zap"

	"gregor/storage/segment"
)

// TruncateTo drops every batch at or above offset (follower truncation,
// KIP-101/279). The batch containing offset is removed whole, so the new log
// end offset is that batch's base offset when offset falls inside a batch.
// No-op when offset >= LogEndOffset; when offset is below the first
// segment's base it behaves as TruncateFullyAndStartAt(offset). The
// leader-epoch cache drops epochs starting at or after the new end and the
// recovery point moves down with it. Errors: ErrLogClosed, I/O errors.
func (l *Log) TruncateTo(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrLogClosed
	}
	if offset >= l.leo.Load() {
		return nil
	}
	sl := l.segs.Load()
	if offset < sl.segs[0].BaseOffset() || offset < 0 {
		return l.truncateFullyLocked(max(offset, 0))
	}
	i := sl.find(offset)
	keep := append([]*segment.Segment(nil), sl.segs[:i+1]...)
	dropped := sl.segs[i+1:]
	last := keep[len(keep)-1]
	if last.BaseOffset() == offset && len(keep) > 1 {
		dropped = sl.segs[i:]
		keep = keep[:len(keep)-1]
		last = keep[len(keep)-1]
	}
	if err := last.Activate(); err != nil { // it becomes the active segment
		return fmt.Errorf("truncate %s to %d: %w", l.tp, offset, err)
	}
	if _, err := last.TruncateTo(offset); err != nil {
		return fmt.Errorf("truncate %s to %d: %w", l.tp, offset, err)
	}
	l.publish(keep)
	newLeo := last.NextOffset()
	l.leo.Store(newLeo)
	if l.start.Load() > newLeo {
		l.start.Store(newLeo)
	}
	l.recover.Store(min(l.recover.Load(), newLeo))
	l.dropSegments(dropped)
	l.deleteSnapshotsAboveLocked(newLeo)
	l.logger.Info("truncated log", zap.Int64("requested_offset", offset), zap.Int64("log_end_offset", newLeo))
	return l.epochs.truncateFromEnd(newLeo)
}

// TruncateFullyAndStartAt deletes every segment and starts an empty log at
// offset (a follower far behind the leader's log start, or a replica
// reset): log start offset = log end offset = recovery point = offset; the
// leader-epoch cache is cleared. Errors: ErrLogClosed, I/O errors.
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrLogClosed
	}
	if offset < 0 {
		return fmt.Errorf("truncate %s fully: negative offset %d", l.tp, offset)
	}
	return l.truncateFullyLocked(offset)
}

func (l *Log) truncateFullyLocked(offset int64) error {
	old := l.segs.Load().segs
	// Unlink the old files first so the new segment may reuse a base name.
	l.dropSegments(old)
	s, err := segment.Create(l.dir, offset, l.segConfig(l.cfg.Load()))
	if err != nil {
		return err
	}
	l.publish([]*segment.Segment{s})
	l.leo.Store(offset)
	l.start.Store(offset)
	l.recover.Store(offset)
	l.unflushedMsgs = 0
	l.deleteSnapshotsAboveLocked(-1) // the producer state starts over with the log
	return l.epochs.clear()
}

// dropSegments unlinks segments removed from the list and drops the log's
// reference (readers holding them finish on the unlinked files).
func (l *Log) dropSegments(segs []*segment.Segment) {
	for _, s := range segs {
		if err := s.DeleteFiles(); err != nil {
			l.logger.Warn("deleting segment files", zap.Int64("base_offset", s.BaseOffset()), zap.Error(err))
		}
		s.Release()
	}
}
