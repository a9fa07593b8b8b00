package storage

import (
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"gregor/storage/checkpoint"
)

// cleanerState is the LogManager's log cleaner bookkeeping: the
// cleaner-offset-checkpoint of every dir (first dirty offset per compacted
// log), loaded on the first pass.
type cleanerState struct {
	mu     sync.Mutex // one pass at a time
	loaded bool
	ckptMu sync.Mutex // ckpt, between a pass's cleanings and CleanerCheckpoint
	ckpt   map[TopicPartition]int64
	// throttle is log.cleaner.io.max.bytes.per.second over every cleaning
	// (SetCleanerIORate, CleanerPass); created by NewLogManager.
	throttle *cleanerThrottle
	// onClean, when set (tests), runs on a pass's worker before each
	// cleaning.
	onClean func(TopicPartition)
}

// SetCleanerIORate changes log.cleaner.io.max.bytes.per.second (bytes/s;
// math.MaxFloat64 = unthrottled) at once, for the cleanings running now
// as for later ones (Kafka's LogCleaner.reconfigure updates its
// Throttler's desired rate).
func (m *LogManager) SetCleanerIORate(bps float64) { m.cleaner.throttle.SetRate(bps) }

// AbortCleaning ends the cleanings in progress at their next I/O (they
// fail with ErrCleaningAborted; the logs are unchanged by the group being
// rewritten) and every later one: for shutdown.
func (m *LogManager) AbortCleaning() { m.cleaner.throttle.close() }

// CleanerPass runs one log cleaner pass (Kafka's CleanerThread.doWork, all
// eligible logs in turn rather than the dirtiest one): every log whose
// cleanup.policy contains "compact" and whose cleanable range reaches its
// min.cleanable.dirty.ratio (or max.compaction.lag.ms forces it) is
// cleaned with Log.Clean, cc.Threads logs at a time (log.cleaner.threads;
// their I/O together throttled to cc.MaxIOBytesPerSecond), then
// cleaner-offset-checkpoint is written in every online dir. Passes are
// serialized. A log whose cleaning fails is
// logged and skipped (its checkpoint stays; ErrCleaningAborted is
// expected when a follower truncates meanwhile); the errors are returned
// joined with the stats of the logs that were cleaned.
func (m *LogManager) CleanerPass(now time.Time, cc CleanerConfig) ([]CleanStats, error) {
	cs := &m.cleaner
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.loaded {
		ckpt := map[TopicPartition]int64{}
		for dir := range m.byDir(false) {
			for tp, off := range m.readOffsets(dir, checkpoint.CleanerOffsetFile) {
				ckpt[tp] = off
			}
		}
		cs.ckptMu.Lock()
		cs.ckpt = ckpt
		cs.ckptMu.Unlock()
		cs.loaded = true
	}
	cc.throttle = cs.throttle
	if cc.MaxIOBytesPerSecond != 0 {
		cs.throttle.SetRate(cc.MaxIOBytesPerSecond)
	}
	type job struct {
		l     *Log
		dirty int64
	}
	var jobs []job
	for _, l := range m.All() {
		cfg := l.Config()
		if !cfg.Compact {
			continue
		}
		dirty := cs.checkpoint(l.TopicPartition())
		if !l.CleanableRange(dirty, now).NeedsCleaning(cfg.MinCleanableDirtyRatio) {
			continue
		}
		jobs = append(jobs, job{l, dirty})
	}
	var (
		resMu      sync.Mutex
		out        []CleanStats
		errs       []error
		cleanedAny bool
		wg         sync.WaitGroup
	)
	work := make(chan job)
	for range min(max(cc.Threads, 1), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				tp := j.l.TopicPartition()
				if cs.onClean != nil {
					cs.onClean(tp)
				}
				st, err := j.l.Clean(j.dirty, now, cc)
				resMu.Lock()
				if err != nil {
					if !errors.Is(err, ErrCleaningAborted) && !errors.Is(err, ErrLogClosed) {
						m.logger.Warn("log cleaning failed", zap.String("partition", tp.String()), zap.Error(err))
						errs = append(errs, err)
					}
				} else {
					cs.ckptMu.Lock()
					cs.ckpt[tp] = st.Range.End
					cs.ckptMu.Unlock()
					cleanedAny = true
					out = append(out, st)
				}
				resMu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	if cleanedAny {
		errs = append(errs, m.writePerDir(checkpoint.CleanerOffsetFile, false, func(l *Log) (int64, bool) {
			cs.ckptMu.Lock()
			defer cs.ckptMu.Unlock()
			off, ok := cs.ckpt[l.TopicPartition()]
			return off, ok
		}))
	}
	return out, errors.Join(errs...)
}

// CleanerCheckpoint returns the first dirty offset recorded for tp by the
// cleaner (cleaner-offset-checkpoint), ok false when none yet.
func (m *LogManager) CleanerCheckpoint(tp TopicPartition) (int64, bool) {
	m.cleaner.ckptMu.Lock()
	defer m.cleaner.ckptMu.Unlock()
	off, ok := m.cleaner.ckpt[tp]
	return off, ok
}

func (cs *cleanerState) checkpoint(tp TopicPartition) int64 {
	cs.ckptMu.Lock()
	defer cs.ckptMu.Unlock()
	return cs.ckpt[tp]
}
