package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"gregor/storage/checkpoint"
)

// GetOrCreate returns the log of tp, creating it when absent: in the dir
// SetPreferredDir chose for it while that dir is online, else in the
// online log dir holding the fewest partitions. For an existing log cfg is
// applied with SetConfig. Errors: ErrNoOnlineLogDir; ErrLogClosed after
// Close; I/O errors.
func (m *LogManager) GetOrCreate(tp TopicPartition, cfg LogConfig) (*Log, error) {
	m.mu.Lock()
	for {
		if m.closed {
			m.mu.Unlock()
			return nil, ErrLogClosed
		}
		if l, ok := m.logs[tp]; ok {
			m.mu.Unlock()
			l.SetConfig(cfg)
			return l, nil
		}
		c, ok := m.creating[tp]
		if !ok {
			break
		}
		m.mu.Unlock() // another call is creating it: wait, then look again
		<-c.done
		if c.err != nil {
			return nil, c.err
		}
		m.mu.Lock()
	}
	if len(m.online) == 0 {
		m.mu.Unlock()
		return nil, ErrNoOnlineLogDir
	}
	dir := m.online[0]
	if p, ok := m.preferred[tp]; ok && m.isOnlineLocked(p) {
		dir = p // an AlterReplicaLogDirs for the partition came first
	} else if len(m.online) > 1 { // the dir with the fewest logs (counted only when there is a choice: O(logs))
		counts := map[string]int{}
		for _, d := range m.parent {
			counts[d]++
		}
		for _, c := range m.creating {
			counts[c.dir]++
		}
		for _, d := range m.online[1:] {
			if counts[d] < counts[dir] {
				dir = d
			}
		}
	}
	c := &creation{dir: dir, done: make(chan struct{})}
	m.creating[tp] = c
	m.mu.Unlock()

	l, err := OpenLog(filepath.Join(dir, tp.String()), cfg, OpenOptions{CleanShutdown: true, Logger: m.logger, FileCache: m.files})
	if err != nil {
		err = fmt.Errorf("create log %s in %s: %w", tp, dir, err)
	} else if err = checkpoint.SyncDir(dir); err != nil {
		l.Close()
	}

	m.mu.Lock()
	delete(m.creating, tp)
	if err == nil && m.closed {
		l.Close()
		err = ErrLogClosed
	}
	if err == nil {
		m.logs[tp] = l
		m.parent[tp] = dir
		delete(m.preferred, tp)
	}
	c.err = err
	close(c.done)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return l, nil
}

// creation is one log GetOrCreate is creating: done is closed when it
// is in m.logs (err nil) or has failed.
type creation struct {
	dir  string
	done chan struct{}
	err  error
}

// awaitCreations waits for the creations under way (Close: their logs
// are closed by them once they see m.closed).
func (m *LogManager) awaitCreations() {
	m.mu.Lock()
	pending := make([]*creation, 0, len(m.creating))
	for _, c := range m.creating {
		pending = append(pending, c)
	}
	m.mu.Unlock()
	for _, c := range pending {
		<-c.done
	}
}

// Get returns the log of tp, if hosted.
func (m *LogManager) Get(tp TopicPartition) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[tp]
	return l, ok
}

// All returns every hosted log, sorted by topic and partition.
func (m *LogManager) All() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Log, 0, len(m.logs))
	for _, l := range m.logs {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].TopicPartition(), out[j].TopicPartition()
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return out
}

// LogDir returns the log dir holding tp.
func (m *LogManager) LogDir(tp TopicPartition) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.parent[tp]
	return d, ok
}

// Delete closes the log of tp (and its future replica, if any) and
// removes its directory: it is first
// renamed to "<topic>-<partition>.<uuid>-delete" (as Kafka), so a crash
// mid-way leaves a directory that the next start removes. Readers holding
// FetchData finish on the unlinked files. No-op when tp is not hosted.
func (m *LogManager) Delete(tp TopicPartition) error {
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	ferr := m.dropFutureLocked(tp)
	m.mu.Lock()
	delete(m.preferred, tp)
	l, ok := m.logs[tp]
	dir := m.parent[tp]
	delete(m.logs, tp)
	delete(m.parent, tp)
	delete(m.hw, tp)
	m.mu.Unlock()
	if !ok {
		return ferr
	}
	err := l.Close()
	return errors.Join(ferr, err, m.removeDir(tp, dir, l.Dir(), false))
}

// OfflineDirs returns the log dirs that failed, with their errors.
func (m *LogManager) OfflineDirs() map[string]error {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]error, len(m.offline))
	for d, e := range m.offline {
		out[d] = e
	}
	return out
}

// byDir groups hosted logs by log dir (online dirs only, each present),
// with the future replicas in theirs when futures is set.
func (m *LogManager) byDir(futures bool) map[string][]*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]*Log, len(m.online))
	for _, d := range m.online {
		out[d] = nil
	}
	for tp, l := range m.logs {
		out[m.parent[tp]] = append(out[m.parent[tp]], l)
	}
	if futures {
		for tp, l := range m.future {
			out[m.futureParent[tp]] = append(out[m.futureParent[tp]], l)
		}
	}
	return out
}

// markOffline takes a dir out of service after a write failure.
func (m *LogManager) markOffline(dir string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, d := range m.online {
		if d == dir {
			m.online = append(m.online[:i:i], m.online[i+1:]...)
			m.offline[dir] = err
			m.logger.Error("log dir offline", zap.String("dir", dir), zap.Error(err))
			return
		}
	}
}

// CheckpointHighWatermarks records the given high watermarks (they also
// bound retention of each log) and writes replication-offset-checkpoint in
// every online log dir with the last known high watermark of each log it
// holds. A dir whose write fails goes offline; the error is returned.
func (m *LogManager) CheckpointHighWatermarks(hw map[TopicPartition]int64) error {
	m.mu.Lock()
	for tp, v := range hw {
		if l, ok := m.logs[tp]; ok {
			m.hw[tp] = v
			l.SetHighWatermark(v)
		}
	}
	known := make(map[TopicPartition]int64, len(m.hw))
	for tp, v := range m.hw {
		known[tp] = v
	}
	m.mu.Unlock()
	return m.writePerDir(checkpoint.ReplicationFile, false, func(l *Log) (int64, bool) {
		v, ok := known[l.TopicPartition()]
		return v, ok
	})
}

// HighWatermarks returns the high watermarks read from
// replication-offset-checkpoint at startup (for the partition layer's
// restart).
func (m *LogManager) HighWatermarks() map[TopicPartition]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[TopicPartition]int64, len(m.hwRead))
	for tp, v := range m.hwRead {
		out[tp] = v
	}
	return out
}

// Checkpoint writes recovery-point-offset-checkpoint and
// log-start-offset-checkpoint in every online log dir. A dir whose write
// fails goes offline; the errors are returned joined.
func (m *LogManager) Checkpoint() error {
	return errors.Join(m.CheckpointRecoveryPoints(), m.CheckpointLogStartOffsets())
}

// CheckpointRecoveryPoints writes recovery-point-offset-checkpoint in every
// online log dir (log.flush.offset.checkpoint.interval.ms's task). A dir
// whose write fails goes offline.
func (m *LogManager) CheckpointRecoveryPoints() error {
	return m.writePerDir(checkpoint.RecoveryPointFile, true, func(l *Log) (int64, bool) { return l.RecoveryPoint(), true })
}

// CheckpointLogStartOffsets writes log-start-offset-checkpoint in every
// online log dir (log.flush.start.offset.checkpoint.interval.ms's task).
// A dir whose write fails goes offline.
func (m *LogManager) CheckpointLogStartOffsets() error {
	return m.writePerDir(checkpoint.LogStartOffsetFile, true, func(l *Log) (int64, bool) { return l.LogStartOffset(), true })
}

func (m *LogManager) writePerDir(name string, futures bool, value func(*Log) (int64, bool)) error {
	m.ckptMu.Lock()
	defer m.ckptMu.Unlock()
	var errs []error
	for dir, logs := range m.byDir(futures) {
		entries := make([]checkpoint.Entry, 0, len(logs))
		for _, l := range logs {
			if v, ok := value(l); ok {
				tp := l.TopicPartition()
				entries = append(entries, checkpoint.Entry{Topic: tp.Topic, Partition: tp.Partition, Offset: v})
			}
		}
		if err := checkpoint.WriteOffsets(filepath.Join(dir, name), entries); err != nil {
			m.markOffline(dir, err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RetentionPass runs retention on every log (retention.ms, retention.bytes,
// log start offset; see Log) and completes segment deletions whose
// file.delete.delay.ms has passed. It returns the number of segments
// scheduled for deletion.
func (m *LogManager) RetentionPass(now time.Time) (segmentsDeleted int, err error) {
	var errs []error
	for _, l := range m.All() {
		n, e := l.retain(now)
		segmentsDeleted += n
		if e != nil {
			errs = append(errs, fmt.Errorf("retention %s: %w", l.TopicPartition(), e))
		}
	}
	return segmentsDeleted, errors.Join(errs...)
}

// FlushPass flushes every log whose unflushed records are older than its
// flush.ms (flush.messages is applied on append).
func (m *LogManager) FlushPass(now time.Time) error {
	var errs []error
	for _, l := range m.All() {
		if e := l.flushIfDue(now); e != nil {
			errs = append(errs, fmt.Errorf("flush %s: %w", l.TopicPartition(), e))
		}
	}
	return errors.Join(errs...)
}

// Close closes every log, syncs each dir's file system once (closeLogs),
// writes the checkpoints, then the
// clean shutdown marker (.kafka_cleanshutdown) in each online dir whose logs
// all closed cleanly, and releases the dir locks. Idempotent.
func (m *LogManager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.awaitCreations()
	m.moveMu.Lock() // a swap under way finishes first
	m.moveMu.Unlock()
	m.bg.Wait() // swapped-out dirs being removed
	var errs []error
	failed := map[string]bool{}
	for dir, closeErrs := range m.closeLogs() {
		if len(closeErrs) > 0 {
			failed[dir] = true
			errs = append(errs, closeErrs...)
		}
	}
	// The logs closed without fsyncs (closeLogs): a dir whose logs or
	// syncfs failed gets no recovery points, so its logs are recovered
	// from their start at the next open rather than trusted to an end
	// that may not be on disk.
	logDir := map[*Log]string{}
	for dir, logs := range m.byDir(true) {
		for _, l := range logs {
			logDir[l] = dir
		}
	}
	synced := func(l *Log) (int64, bool) { return l.RecoveryPoint(), !failed[logDir[l]] }
	if err := m.writePerDir(checkpoint.RecoveryPointFile, true, synced); err != nil {
		errs = append(errs, err)
	}
	if err := m.writePerDir(checkpoint.LogStartOffsetFile, true, func(l *Log) (int64, bool) { return l.LogStartOffset(), true }); err != nil {
		errs = append(errs, err)
	}
	if err := m.CheckpointHighWatermarks(nil); err != nil {
		errs = append(errs, err)
	}
	m.mu.Lock()
	online := append([]string(nil), m.online...)
	m.mu.Unlock()
	for _, dir := range online {
		if failed[dir] {
			continue
		}
		if err := checkpoint.WriteFileAtomic(filepath.Join(dir, CleanShutdownFile), nil); err != nil {
			errs = append(errs, err)
		}
	}
	m.mu.Lock()
	m.unlockAll()
	m.mu.Unlock()
	return errors.Join(errs...)
}

// Reopen closes tp's log and opens its directory again, re-validating every
// segment from the log's recovery point on (as after an unclean shutdown).
// A partition actor that crashed calls it when it restarts, so it resumes
// from what is on disk rather than from in-memory state the panic may have
// left half-updated. Readers holding FetchData from the old Log keep their
// files until they release them. Errors: ErrLogClosed after Close; an
// unknown tp is an error.
func (m *LogManager) Reopen(tp TopicPartition) (*Log, error) {
	m.moveMu.Lock() // not in the middle of a swap
	defer m.moveMu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrLogClosed
	}
	old, ok := m.logs[tp]
	if !ok {
		return nil, fmt.Errorf("reopen %s: no such log", tp)
	}
	cfg, rp, start := old.Config(), old.RecoveryPoint(), old.LogStartOffset()
	var topicID *[16]byte
	if id, ok := old.TopicID(); ok {
		topicID = &id
	}
	if err := old.Close(); err != nil && !errors.Is(err, ErrLogClosed) {
		m.logger.Warn("closing log before reopen", zap.Stringer("partition", tp), zap.Error(err))
	}
	l, err := OpenLog(old.Dir(), cfg, OpenOptions{RecoveryPoint: rp, LogStartOffset: start, TopicID: topicID, Logger: m.logger, FileCache: m.files})
	if err != nil {
		delete(m.logs, tp)
		return nil, fmt.Errorf("reopen %s: %w", tp, err)
	}
	m.logs[tp] = l
	return l, nil
}

// closeLogs closes every log as Kafka's LogManager.shutdown does — the
// dirs in parallel, num.recovery.threads.per.data.dir logs at a time
// within each — but without a flush per log: a broker leading 20,000
// partitions has 20,000 active segments with unflushed appends, and their
// fsyncs, one by one, were most of a clean shutdown (BenchmarkLogManagerClose:
// 0.57 ms per log). Each dir's file system is then synced once (syncfs),
// which writes every closed log's tail and indexes in one sweep. A dir
// whose logs or sync failed is reported, so Close neither checkpoints its
// recovery points nor marks it cleanly shut down: the next start recovers
// it from the last checkpoint, as after a crash.
func (m *LogManager) closeLogs() map[string][]error {
	byDir := m.byDir(true)
	out := make(map[string][]error, len(byDir))
	var mu sync.Mutex
	var dirs sync.WaitGroup
	for dir, logs := range byDir {
		dirs.Add(1)
		go func() {
			defer dirs.Done()
			sem := make(chan struct{}, m.cfg.RecoveryThreadsPerDir)
			var wg sync.WaitGroup
			for _, l := range logs {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					if err := l.closeUnsynced(); err != nil {
						mu.Lock()
						out[dir] = append(out[dir], fmt.Errorf("close %s: %w", l.TopicPartition(), err))
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if err := syncFS(dir); err != nil {
				mu.Lock()
				out[dir] = append(out[dir], err)
				mu.Unlock()
			}
		}()
	}
	dirs.Wait()
	return out
}

// syncFS flushes the whole file system holding dir (syncfs(2)): every
// file's dirty pages, mapped index pages included, and metadata.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync log dir %s: %w", dir, err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}
