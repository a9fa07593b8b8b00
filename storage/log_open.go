package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"gregor/storage/checkpoint"
	"gregor/storage/segment"
)

// OpenLog opens (or creates) the partition log in dir, whose base name must
// be "<topic>-<partition>", or "<topic>-<partition>.<32 hex>-future" for
// a future replica being moved between log dirs (FutureDirName). Leftover files are handled as Kafka does:
// *.deleted and *.cleaned files are removed, *.swap files are renamed to
// complete an interrupted swap (and the segments they replace removed),
// index files without a .log are removed. Segments whose indexes are
// missing or corrupt are rebuilt. After an unclean shutdown every segment
// from opts.RecoveryPoint on is re-validated batch by batch; a torn or
// corrupt tail is truncated (WARN log with partition, offset and bytes) and
// later segments are deleted.
func OpenLog(dir string, cfg LogConfig, opts OpenOptions) (*Log, error) {
	tp, err := parseLogDirName(filepath.Base(dir))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	l := &Log{dir: dir, tp: tp, logger: logger.With(zap.String("partition", tp.String())), lastFlush: time.Now(), files: opts.FileCache}
	l.cfg.Store(&cfg)
	l.rollJitter.Store(segmentJitter(&cfg))
	l.hw.Store(-1)
	l.lso.Store(-1)
	if err := l.load(&cfg, opts); err != nil {
		return nil, err
	}
	if l.epochs, err = newLeaderEpochCache(l.epochPath(), l.LogEndOffset); err != nil {
		l.releaseAll()
		return nil, err
	}
	if err := l.epochs.truncateFromEnd(l.LogEndOffset()); err != nil {
		l.releaseAll()
		return nil, err
	}
	if err := l.epochs.truncateFromStart(l.LogStartOffset()); err != nil {
		l.releaseAll()
		return nil, err
	}
	if opts.TopicID != nil {
		if err := l.SetTopicID(*opts.TopicID); err != nil {
			l.releaseAll()
			return nil, err
		}
	} else if id, err := checkpoint.ReadPartitionMetadata(dir); err == nil {
		l.topicID.Store(&id)
	} else if !errors.Is(err, fs.ErrNotExist) {
		l.logger.Warn("ignoring unreadable partition.metadata", zap.Error(err))
	}
	return l, nil
}

// load opens every segment, running recovery where needed, and publishes
// the segment list, log end offset, log start offset and recovery point.
func (l *Log) load(cfg *LogConfig, opts OpenOptions) error {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("open log %s: %w", l.dir, err)
	}
	logs := map[int64]bool{}
	swaps := map[int64]bool{}
	var indexes []string
	var txnSwaps []int64
	for _, e := range ents {
		base, suffix, ok := segment.ParseName(e.Name())
		if !ok {
			continue
		}
		p := filepath.Join(l.dir, e.Name())
		switch {
		case strings.HasSuffix(suffix, segment.DeletedSuffix), strings.HasSuffix(suffix, segment.CleanedSuffix):
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("open log %s: remove leftover: %w", l.dir, err)
			}
		case strings.HasSuffix(suffix, segment.SwapSuffix):
			if suffix == segment.LogSuffix+segment.SwapSuffix {
				swaps[base] = true
			} else if suffix == segment.TxnIndexSuffix+segment.SwapSuffix {
				// Kept when its .log.swap is there: renamed with it below
				// (recovery does not rebuild a .txnindex, and the
				// producer-state rebuild only repairs above its snapshot).
				txnSwaps = append(txnSwaps, base)
			} else if err := os.Remove(p); err != nil { // swapped indexes are rebuilt
				return fmt.Errorf("open log %s: remove swap index: %w", l.dir, err)
			}
		case suffix == segment.LogSuffix:
			logs[base] = true
		default:
			indexes = append(indexes, p)
		}
	}
	for _, base := range txnSwaps {
		if !swaps[base] { // the cleaner stopped before its .log became .swap
			if err := os.Remove(segment.Path(l.dir, base, segment.TxnIndexSuffix+segment.SwapSuffix)); err != nil {
				return fmt.Errorf("open log %s: remove swap index: %w", l.dir, err)
			}
		}
	}
	for base := range swaps {
		// Complete the swap: the .swap file replaces the segment of the same
		// base; its indexes are rebuilt by recovery below.
		for _, suf := range []string{segment.IndexSuffix, segment.TimeIndexSuffix} {
			if err := os.Remove(segment.Path(l.dir, base, suf)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		txnSwap := segment.Path(l.dir, base, segment.TxnIndexSuffix+segment.SwapSuffix)
		if err := os.Rename(txnSwap, segment.Path(l.dir, base, segment.TxnIndexSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("open log %s: complete swap: %w", l.dir, err)
		}
		if err := os.Rename(segment.Path(l.dir, base, segment.LogSuffix+segment.SwapSuffix), segment.Path(l.dir, base, segment.LogSuffix)); err != nil {
			return fmt.Errorf("open log %s: complete swap: %w", l.dir, err)
		}
		logs[base] = true
	}
	for _, p := range indexes {
		base, _, _ := segment.ParseName(filepath.Base(p))
		if !logs[base] {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("open log %s: remove orphan index: %w", l.dir, err)
			}
		}
	}
	bases := make([]int64, 0, len(logs))
	for b := range logs {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })

	scfg := l.segConfig(cfg)
	var segs []*segment.Segment
	fail := func(err error) error {
		for _, s := range segs {
			s.Release()
		}
		return err
	}
	for i := 0; i < len(bases); i++ {
		base := bases[i]
		s, err := segment.Open(l.dir, base, scfg)
		needRecover := errors.Is(err, segment.ErrNeedsRecovery)
		if err != nil && !needRecover {
			return fail(err)
		}
		if !opts.CleanShutdown && (i == len(bases)-1 || bases[i+1] > opts.RecoveryPoint) {
			needRecover = true
		}
		if swaps[base] {
			needRecover = true
		}
		if needRecover && i == len(bases)-1 {
			// The last segment takes the appends: made writable before the
			// rebuild, so its index files are preallocated once, not
			// trimmed by the recovery and extended again below.
			if err := s.Activate(); err != nil {
				s.Release()
				return fail(err)
			}
		}
		if needRecover {
			res, err := s.Recover(maxRecoverBatch(cfg))
			if err != nil {
				s.Release()
				return fail(err)
			}
			if !opts.DeferRecoverySync {
				if err := s.Sync(); err != nil {
					s.Release()
					return fail(err)
				}
			}
			if res.Cause != nil || swaps[base] {
				// Drop later segments: those a swap replaced, or everything
				// after a corrupt tail (Kafka deletes the unflushed rest).
				var dropped int64
				j := i + 1
				for ; j < len(bases) && (res.Cause != nil || bases[j] < s.NextOffset()); j++ {
					dropped += removeSegmentFiles(l.dir, bases[j])
				}
				bases = append(bases[:i+1], bases[j:]...)
				if res.Cause != nil {
					l.logger.Warn("truncated corrupt or torn log tail during recovery",
						zap.Int64("offset", s.NextOffset()),
						zap.Int64("bytes", res.TruncatedBytes),
						zap.Int64("later_segment_bytes_deleted", dropped),
						zap.NamedError("cause", res.Cause))
				}
			}
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		s, err := segment.Create(l.dir, max(opts.LogStartOffset, 0), scfg)
		if err != nil {
			return err
		}
		segs = append(segs, s)
	} else if err := segs[len(segs)-1].Activate(); err != nil {
		// The last segment takes the appends: preallocated, mapped
		// read-write indexes (Kafka resizes the active segment's indexes
		// at load).
		return fail(err)
	}
	l.publish(segs)
	leo := segs[len(segs)-1].NextOffset()
	l.leo.Store(leo)
	l.start.Store(min(max(opts.LogStartOffset, segs[0].BaseOffset()), leo))
	l.recover.Store(leo) // everything is either flushed at clean shutdown or re-validated and fsynced (DeferRecoverySync: by the caller, before a checkpoint)
	return nil
}

// removeSegmentFiles deletes the files of segment base and returns the
// .log bytes removed.
func removeSegmentFiles(dir string, base int64) int64 {
	var n int64
	if fi, err := os.Stat(segment.Path(dir, base, segment.LogSuffix)); err == nil {
		n = fi.Size()
	}
	for _, suf := range []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix} {
		_ = os.Remove(segment.Path(dir, base, suf))
	}
	return n
}

// releaseAll drops the log's reference on every segment (files close once
// readers are done).
func (l *Log) releaseAll() {
	if sl := l.segs.Load(); sl != nil {
		for _, s := range sl.segs {
			s.Release()
		}
	}
}
