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
	ckpt   map[TopicPartition]int64
}

// CleanerPass runs one log cleaner pass (Kafka's CleanerThread.doWork, all
// eligible logs in turn rather than the dirtiest one): every log whose
// cleanup.policy contains "compact" and whose cleanable range reaches its
// min.cleanable.dirty.ratio (or max.compaction.lag.ms forces it) is
// cleaned with Log.Clean, then cleaner-offset-checkpoint is written in
// every online dir. Passes are serialized. A log whose cleaning fails is
// logged and skipped (its checkpoint stays; ErrCleaningAborted is
// expected when a follower truncates meanwhile); the errors are returned
// joined with the stats of the logs that were cleaned.
func (m *LogManager) CleanerPass(now time.Time, cc CleanerConfig) ([]CleanStats, error) {
	cs := &m.cleaner
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.loaded {
		cs.ckpt = map[TopicPartition]int64{}
		for dir := range m.byDir(false) {
			for tp, off := range m.readOffsets(dir, checkpoint.CleanerOffsetFile) {
				cs.ckpt[tp] = off
			}
		}
		cs.loaded = true
	}
	var out []CleanStats
	var errs []error
	cleanedAny := false
	for _, l := range m.All() {
		cfg := l.Config()
		if !cfg.Compact {
			continue
		}
		tp := l.TopicPartition()
		r := l.CleanableRange(cs.ckpt[tp], now)
		if !r.NeedsCleaning(cfg.MinCleanableDirtyRatio) {
			continue
		}
		st, err := l.Clean(cs.ckpt[tp], now, cc)
		if err != nil {
			if !errors.Is(err, ErrCleaningAborted) && !errors.Is(err, ErrLogClosed) {
				m.logger.Warn("log cleaning failed", zap.String("partition", tp.String()), zap.Error(err))
				errs = append(errs, err)
			}
			continue
		}
		cs.ckpt[tp] = st.Range.End
		cleanedAny = true
		out = append(out, st)
	}
	if cleanedAny {
		errs = append(errs, m.writePerDir(checkpoint.CleanerOffsetFile, false, func(l *Log) (int64, bool) {
			off, ok := cs.ckpt[l.TopicPartition()]
			return off, ok
		}))
	}
	return out, errors.Join(errs...)
}

// CleanerCheckpoint returns the first dirty offset recorded for tp by the
// cleaner (cleaner-offset-checkpoint), ok false when none yet.
func (m *LogManager) CleanerCheckpoint(tp TopicPartition) (int64, bool) {
	m.cleaner.mu.Lock()
	defer m.cleaner.mu.Unlock()
	off, ok := m.cleaner.ckpt[tp]
	return off, ok
}
