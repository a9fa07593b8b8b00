package storage

import (
	"time"

	"go.uber.org/zap"
)

// Flush fsyncs every segment with unflushed appends and moves the recovery
// point to the log end offset. Errors: ErrLogClosed, I/O errors.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrLogClosed
	}
	return l.flushLocked()
}

func (l *Log) flushLocked() error {
	leo := l.leo.Load()
	if err := l.syncAllLocked(); err != nil {
		return err
	}
	l.recover.Store(leo)
	l.unflushedMsgs = 0
	l.lastFlush = time.Now()
	return nil
}

// maybeFlushLocked applies flush.messages after an append of n records.
func (l *Log) maybeFlushLocked(cfg *LogConfig, n int64) error {
	l.unflushedMsgs += n
	if l.unflushedMsgs >= cfg.FlushMessages {
		return l.flushLocked()
	}
	return nil
}

// flushIfDue applies flush.ms: flush when unflushed records are older than
// FlushMs (judged from the last flush).
func (l *Log) flushIfDue(now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() || l.unflushedMsgs == 0 {
		return nil
	}
	if now.Sub(l.lastFlush).Milliseconds() < l.cfg.Load().FlushMs {
		return nil
	}
	return l.flushLocked()
}

// Close flushes the log (final time index entry for the active segment,
// fsync of every segment), deletes segments awaiting deletion and drops the
// log's segment references; readers holding FetchData keep their files
// until they Release. Later calls return ErrLogClosed from mutators and
// reads. Idempotent.
func (l *Log) Close() error { return l.close(true) }

// closeUnsynced is Close without its fsyncs: the recovery point moves to
// the log end offset although the tail may still be only in the page
// cache. For LogManager.Close, which syncs each log dir's whole file
// system once (syncfs) before it checkpoints the recovery points, and
// does not checkpoint them if that fails.
func (l *Log) closeUnsynced() error { return l.close(false) }

func (l *Log) close(sync bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return nil
	}
	err := l.segs.Load().active().OnBecomeInactive()
	if sync {
		if ferr := l.flushLocked(); err == nil {
			err = ferr
		}
	} else if err == nil {
		l.recover.Store(l.leo.Load())
		l.unflushedMsgs = 0
	}
	l.closed.Store(true)
	for _, p := range l.pending {
		if derr := p.seg.DeleteFiles(); derr != nil {
			l.logger.Warn("deleting segment on close", zap.Error(derr))
		}
		p.seg.Release()
	}
	l.pending = nil
	l.releaseAll()
	return err
}
