package storage

// Future replicas: AlterReplicaLogDirs (API 34) moves a partition's log to
// another log dir on a live broker the way Kafka does. A copy, the future
// replica, is built in "<dest>/<topic>-<partition>.<32 hex>-future" by the
// partition layer (partition/logdir_move.go) from the current log; once it
// has caught up, ReplaceCurrentWithFuture swaps it in: the current dir is
// renamed "<tp>.<id>-delete" and removed in the background, the future dir
// renamed "<tp>", and the checkpoints written again so the partition's
// recovery point and log start offset are now recorded in the new dir.
//
// The LogManager only keeps the future logs (opened at startup, created,
// dropped, swapped); who writes them, and when to swap, is the partition
// actor's business. Future logs are in the per-dir recovery-point and
// log-start checkpoints of their dir (Kafka checkpoints them too), not in
// the high watermark checkpoint, retention, flush or cleaner passes.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"gregor/storage/checkpoint"
)

// futureSuffix and deleteSuffix end the directory names of future replicas
// and of partition dirs being deleted (Kafka's UnifiedLog.FutureDirSuffix
// and DeleteDirSuffix).
const (
	futureSuffix = "-future"
	deleteSuffix = "-delete"
)

// ErrLogDirNotFound: an AlterReplicaLogDirs destination is not one of
// log.dirs by absolute path (LOG_DIR_NOT_FOUND, code 57).
var ErrLogDirNotFound = errors.New("log dir not found")

// ErrLogDirOffline: the log dir is offline, or the operation needs every
// log dir online (KAFKA_STORAGE_ERROR, code 56).
var ErrLogDirOffline = errors.New("log dir offline")

// ErrNoFutureLog: the partition has no future replica (or no current log)
// to swap in.
var ErrNoFutureLog = errors.New("no future log")

// uniqueID is 32 random hex digits (Kafka uses a UUID without dashes).
func uniqueID() string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

// FutureDirName is a new future-replica directory name for tp,
// "<topic>-<partition>.<32 hex>-future" (Kafka's
// UnifiedLog.logFutureDirName). AlterReplicaLogDirs refuses a partition
// whose name is longer than 255 bytes (INVALID_TOPIC_EXCEPTION).
func FutureDirName(tp TopicPartition) string { return tp.String() + "." + uniqueID() + futureSuffix }

// deleteDirName is "<topic>-<partition>.<32 hex>-delete".
func deleteDirName(tp TopicPartition) string { return tp.String() + "." + uniqueID() + deleteSuffix }

// parseLogDirName parses a partition directory name: "<topic>-<partition>"
// or a future replica's "<topic>-<partition>.<32 hex>-future".
func parseLogDirName(name string) (TopicPartition, error) {
	if base, ok := strings.CutSuffix(name, futureSuffix); ok {
		i := strings.LastIndexByte(base, '.')
		if i < 0 || len(base)-i-1 != 32 {
			return TopicPartition{}, fmt.Errorf("%q is not a future replica directory name", name)
		}
		if _, err := hex.DecodeString(base[i+1:]); err != nil {
			return TopicPartition{}, fmt.Errorf("%q is not a future replica directory name", name)
		}
		name = base[:i]
	}
	return ParseTopicPartition(name)
}

// ResolveLogDir maps an absolute log dir path (as AlterReplicaLogDirs and
// DescribeLogDirs name them) to the configured log.dirs entry. Errors:
// ErrLogDirNotFound when no configured dir has that absolute path
// (Kafka's "Log dir %s is not found in the config."); ErrLogDirOffline
// when it is offline.
func (m *LogManager) ResolveLogDir(abs string) (string, error) {
	for _, d := range m.cfg.Dirs {
		a, err := filepath.Abs(d)
		if err != nil || a != abs {
			continue
		}
		m.mu.Lock()
		online := m.isOnlineLocked(d)
		m.mu.Unlock()
		if !online {
			return d, fmt.Errorf("%w: Log directory %s is offline", ErrLogDirOffline, abs)
		}
		return d, nil
	}
	return "", fmt.Errorf("%w: Log dir %s is not found in the config.", ErrLogDirNotFound, abs)
}

func (m *LogManager) isOnlineLocked(dir string) bool {
	for _, d := range m.online {
		if d == dir {
			return true
		}
	}
	return false
}

// SetPreferredDir records dir (a configured log.dirs entry) as where tp's
// log is to be created when it is created later (Kafka's
// maybeUpdatePreferredLogDir): GetOrCreate uses it while it is online.
// Nothing is recorded when tp's current or future log is already in dir.
func (m *LogManager) SetPreferredDir(tp TopicPartition, dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.logs[tp]; ok && m.parent[tp] == dir {
		return
	}
	if _, ok := m.future[tp]; ok && m.futureParent[tp] == dir {
		return
	}
	m.preferred[tp] = dir
}

// PreferredDir is the dir SetPreferredDir recorded for tp, if any.
func (m *LogManager) PreferredDir(tp TopicPartition) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.preferred[tp]
	return d, ok
}

// Future returns tp's future replica and its log dir, if one exists.
func (m *LogManager) Future(tp TopicPartition) (*Log, string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.future[tp]
	return l, m.futureParent[tp], ok
}

// CreateFuture creates tp's future replica in dir (a configured log.dirs
// entry), an empty log with the current log's config and topic id, or
// returns the existing one when it is already in dir. Errors:
// ErrLogDirOffline when dir or any other log dir is offline (Kafka creates
// no future replica then, so that one partition never has copies in
// several dirs); ErrNoFutureLog when tp has no current log; an error when
// the current log is in dir or a future replica exists in another dir;
// ErrLogClosed after Close; I/O errors.
func (m *LogManager) CreateFuture(tp TopicPartition, dir string) (*Log, error) {
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	m.mu.Lock()
	cur, ok := m.logs[tp]
	curDir := m.parent[tp]
	fut, hasFut := m.future[tp]
	futDir := m.futureParent[tp]
	closed, offline, online := m.closed, len(m.offline), m.isOnlineLocked(dir)
	m.mu.Unlock()
	switch {
	case closed:
		return nil, ErrLogClosed
	case !online || offline > 0:
		return nil, fmt.Errorf("%w: a future replica of %s is not created while a log dir is offline", ErrLogDirOffline, tp)
	case !ok:
		return nil, fmt.Errorf("%w: %s has no current log", ErrNoFutureLog, tp)
	case curDir == dir:
		return nil, fmt.Errorf("create future log of %s: the current log is in %s", tp, dir)
	case hasFut && futDir == dir:
		return fut, nil
	case hasFut:
		return nil, fmt.Errorf("create future log of %s: the future log dir %s is not the requested %s", tp, futDir, dir)
	}
	var topicID *[16]byte
	if id, ok := cur.TopicID(); ok {
		topicID = &id
	}
	l, err := OpenLog(filepath.Join(dir, FutureDirName(tp)), cur.Config(), OpenOptions{CleanShutdown: true, TopicID: topicID, Logger: m.logger, FileCache: m.files})
	if err != nil {
		return nil, fmt.Errorf("create future log of %s in %s: %w", tp, dir, err)
	}
	if err := checkpoint.SyncDir(dir); err != nil {
		l.Close()
		_ = os.RemoveAll(l.Dir())
		return nil, err
	}
	m.mu.Lock()
	m.future[tp], m.futureParent[tp] = l, dir
	m.mu.Unlock()
	m.logger.Info("created future log", zap.Stringer("partition", tp), zap.String("dir", l.Dir()))
	return l, nil
}

// DropFuture closes tp's future replica and removes its directory (a
// move cancelled or redirected: Kafka's removeFutureLocalReplica). A
// writer still appending to it gets ErrLogClosed. No-op without one.
func (m *LogManager) DropFuture(tp TopicPartition) error {
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	return m.dropFutureLocked(tp)
}

func (m *LogManager) dropFutureLocked(tp TopicPartition) error {
	m.mu.Lock()
	l, ok := m.future[tp]
	dir := m.futureParent[tp]
	delete(m.future, tp)
	delete(m.futureParent, tp)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	err := l.Close()
	return errors.Join(err, m.removeDir(tp, dir, l.Dir(), false))
}

// removeDir renames a partition directory to "<tp>.<id>-delete" (so a
// crash leaves a directory the next start removes) and removes it, now
// or, with background, on a goroutine Close waits for.
func (m *LogManager) removeDir(tp TopicPartition, parent, path string, background bool) error {
	doomed := filepath.Join(parent, deleteDirName(tp))
	if err := os.Rename(path, doomed); err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	err := checkpoint.SyncDir(parent)
	remove := func() error {
		if rerr := os.RemoveAll(doomed); rerr != nil {
			return fmt.Errorf("delete %s: %w", doomed, rerr)
		}
		return nil
	}
	if !background {
		return errors.Join(err, remove())
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		if rerr := remove(); rerr != nil {
			m.logger.Warn("removing swapped-out log dir", zap.Error(rerr))
		}
	}()
	return err
}

// ReplaceCurrentWithFuture swaps tp's future replica in as its log
// (Kafka's LogManager.replaceCurrentWithFutureLog): both logs are closed
// (the future one flushed), the current directory renamed
// "<tp>.<id>-delete" and removed in the background, the future directory
// renamed "<tp>" in its log dir and opened there as the partition's log,
// which it returns; the checkpoints are then rewritten so the new dir
// records tp and the old one no longer does. The caller, the partition's
// only writer, holds its appends meanwhile; readers of the old log get
// ErrLogClosed (those holding FetchData finish on the unlinked files).
//
// Errors: ErrNoFutureLog; ErrLogClosed after Close; I/O errors — after
// the current log was closed the partition has to be reopened (Reopen):
// a failed rename puts the current dir back and forgets the copy (its
// dir is loaded again at the next start); a swapped log that does not
// open leaves tp without a log (GetOrCreate once the replica is recreated).
func (m *LogManager) ReplaceCurrentWithFuture(tp TopicPartition) (*Log, error) {
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	m.mu.Lock()
	cur, okCur := m.logs[tp]
	fut, okFut := m.future[tp]
	curDir, futDir := m.parent[tp], m.futureParent[tp]
	closed := m.closed
	m.mu.Unlock()
	switch {
	case closed:
		return nil, ErrLogClosed
	case !okCur || !okFut:
		return nil, fmt.Errorf("%w: replace current log of %s", ErrNoFutureLog, tp)
	}
	cfg, hw := cur.Config(), cur.hw.Load()
	var topicID *[16]byte
	if id, ok := cur.TopicID(); ok {
		topicID = &id
	}
	if err := fut.Close(); err != nil {
		// The copy may not be on disk: keep the current log, drop the copy.
		_ = m.dropFutureLocked(tp)
		return nil, fmt.Errorf("replace current log of %s: close future log: %w", tp, err)
	}
	rp, start := fut.RecoveryPoint(), fut.LogStartOffset()
	if err := cur.Close(); err != nil {
		m.logger.Warn("closing the current log before the swap", zap.Stringer("partition", tp), zap.Error(err))
	}
	// The current dir goes first: a crash between the renames leaves only
	// the future dir, which the next start takes as the log (adoptFutures).
	doomed := filepath.Join(curDir, deleteDirName(tp))
	if err := os.Rename(cur.Dir(), doomed); err != nil {
		// The current dir is where it was: Reopen finds it. The closed
		// copy is forgotten until the next start loads its dir again.
		m.forgetFuture(tp)
		return nil, fmt.Errorf("replace current log of %s: %w", tp, err)
	}
	final := filepath.Join(futDir, tp.String())
	if err := os.Rename(fut.Dir(), final); err != nil {
		// Put the current dir back so Reopen (the partition's restart)
		// finds it; if that fails too, the source dir is offline.
		if rerr := os.Rename(doomed, cur.Dir()); rerr != nil {
			m.markOffline(curDir, rerr)
		}
		m.forgetFuture(tp)
		return nil, fmt.Errorf("replace current log of %s: %w", tp, err)
	}
	if err := errors.Join(checkpoint.SyncDir(curDir), checkpoint.SyncDir(futDir)); err != nil {
		return nil, fmt.Errorf("replace current log of %s: %w", tp, err)
	}
	l, err := OpenLog(final, cfg, OpenOptions{CleanShutdown: true, RecoveryPoint: rp, LogStartOffset: start, TopicID: topicID, Logger: m.logger, FileCache: m.files})
	m.mu.Lock()
	delete(m.future, tp)
	delete(m.futureParent, tp)
	if err != nil {
		delete(m.logs, tp)
		delete(m.parent, tp)
	} else {
		l.SetHighWatermark(hw)
		l.SetLastStableOffset(cur.lso.Load())
		m.logs[tp], m.parent[tp] = l, futDir
	}
	m.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("replace current log of %s: open %s: %w", tp, final, err)
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		if rerr := os.RemoveAll(doomed); rerr != nil {
			m.logger.Warn("removing swapped-out log dir", zap.String("dir", doomed), zap.Error(rerr))
		}
	}()
	if cerr := m.Checkpoint(); cerr != nil {
		m.logger.Warn("checkpoint after log dir swap", zap.Stringer("partition", tp), zap.Error(cerr))
	}
	m.logger.Info("the current replica was replaced with the future replica",
		zap.Stringer("partition", tp), zap.String("from", curDir), zap.String("to", futDir), zap.Int64("logEndOffset", l.LogEndOffset()))
	return l, nil
}

// adoptFutures registers the future replicas found at startup: each one
// whose partition has a current log becomes that log's future replica;
// one without (a swap interrupted between its renames: the current dir
// was already renamed for deletion) is renamed "<tp>" and becomes the
// current log. Two future replicas of one partition are an error, as two
// current logs are.
func (m *LogManager) adoptFutures(loads []dirLoad) error {
	for li := range loads {
		ld := &loads[li]
		if ld.err != nil {
			continue
		}
		for i, l := range ld.futures {
			tp := l.TopicPartition()
			if other, ok := m.futureParent[tp]; ok {
				return fmt.Errorf("log manager: duplicate future log directories for %s: %s and %s", tp, other, ld.dir)
			}
			if _, ok := m.logs[tp]; ok {
				m.future[tp], m.futureParent[tp] = l, ld.dir
				m.logger.Info("loaded future log", zap.Stringer("partition", tp), zap.String("dir", l.Dir()))
				continue
			}
			cfg, rp, start := l.Config(), l.RecoveryPoint(), l.LogStartOffset()
			if err := l.Close(); err != nil {
				return fmt.Errorf("log manager: promote future log %s: %w", l.Dir(), err)
			}
			final := filepath.Join(ld.dir, tp.String())
			if err := os.Rename(l.Dir(), final); err != nil {
				return fmt.Errorf("log manager: promote future log %s: %w", l.Dir(), err)
			}
			nl, err := OpenLog(final, cfg, OpenOptions{CleanShutdown: true, RecoveryPoint: rp, LogStartOffset: start, Logger: m.logger, FileCache: m.files})
			if err != nil {
				return fmt.Errorf("log manager: promote future log %s: %w", final, err)
			}
			ld.futures[i] = nl // closed with the others on a later error
			m.logs[tp], m.parent[tp] = nl, ld.dir
			m.logger.Warn("future log without a current log (a swap was interrupted): it is now the current log",
				zap.Stringer("partition", tp), zap.String("dir", final))
		}
	}
	return nil
}

// forgetFuture unregisters tp's future log without touching its dir (a
// failed swap closed it; the next start loads the dir as a future log).
func (m *LogManager) forgetFuture(tp TopicPartition) {
	m.mu.Lock()
	delete(m.future, tp)
	delete(m.futureParent, tp)
	m.mu.Unlock()
}
