package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"gregor/storage/record"
	"gregor/storage/segment"
)

// ErrUnexpectedAppendOffset: a follower batch starts below the log end
// offset or below the previous batch's next offset (Kafka's
// UnexpectedAppendOffsetException).
var ErrUnexpectedAppendOffset = errors.New("unexpected append offset")

// Append appends ONE v2 record batch from a producer (leader side). Unless
// opts.PreValidated, the batch is validated first with record.Validate and
// record.ValidateRecords (keys required when cfg.Compact). Then it gets
// offsets by rewriting its baseOffset in place to the log end offset, its
// partitionLeaderEpoch stamped (opts.LeaderEpoch >= 0), its log append time
// (opts.LogAppendTime >= 0), and is written to the active segment, rolling
// first when segment.bytes, segment.ms or segment.index.bytes say so.
// batch is modified in place.
//
// Errors (nothing is written): ErrRecordTooLarge when len(batch) exceeds
// max.message.bytes; *record.CorruptError / *record.InvalidError from
// validation (an *InvalidError also for bytes after the batch); ErrLogClosed;
// I/O errors.
func (l *Log) Append(batch []byte, opts AppendOptions) (AppendInfo, error) {
	cfg := l.cfg.Load()
	if len(batch) > int(cfg.MaxMessageBytes) {
		return AppendInfo{}, fmt.Errorf("%w: %d bytes > %d", ErrRecordTooLarge, len(batch), cfg.MaxMessageBytes)
	}
	var h record.Header
	var err error
	if opts.PreValidated {
		h, err = record.ParseHeader(batch)
	} else {
		var b []byte
		if h, b, err = record.Validate(batch); err == nil {
			err = record.ValidateRecords(h, b, maxUncompressed(cfg), cfg.Compact)
		}
	}
	if err != nil {
		return AppendInfo{}, err
	}
	if len(batch) != h.Size() {
		return AppendInfo{}, &record.InvalidError{Reason: fmt.Sprintf("%d bytes after the record batch", len(batch)-h.Size()), RecordIndex: -1}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return AppendInfo{}, ErrLogClosed
	}
	leo := l.leo.Load()
	record.SetBaseOffset(batch, leo)
	if opts.LeaderEpoch >= 0 {
		record.SetPartitionLeaderEpoch(batch, opts.LeaderEpoch)
	}
	if opts.LogAppendTime >= 0 {
		record.SetLogAppendTime(batch, opts.LogAppendTime)
	}
	if h, err = record.ParseHeader(batch); err != nil {
		return AppendInfo{}, err
	}
	if opts.LeaderEpoch >= 0 {
		if err := l.epochs.Assign(opts.LeaderEpoch, leo); err != nil {
			return AppendInfo{}, err
		}
	}
	if err := l.appendLocked(cfg, batch, h); err != nil {
		return AppendInfo{}, err
	}
	info := AppendInfo{
		FirstOffset:          h.BaseOffset,
		LastOffset:           h.LastOffset(),
		MaxTimestamp:         h.MaxTimestamp,
		OffsetOfMaxTimestamp: h.LastOffset(),
		LogAppendTime:        -1,
		RecordCount:          h.RecordCount,
		Bytes:                len(batch),
	}
	if opts.LogAppendTime >= 0 {
		info.LogAppendTime = opts.LogAppendTime
		info.OffsetOfMaxTimestamp = h.BaseOffset
	}
	return info, l.maybeFlushLocked(cfg, int64(h.RecordCount))
}

// AppendAsFollower appends one or more batches fetched from the leader,
// keeping their offsets (follower side). Every batch is checked with
// record.ValidateIntegrity (structure, magic, CRC-32C) before anything is written; the first
// must not start below the log end offset and each must start at or after
// the previous one's next offset (gaps are allowed, as compacted leaders
// produce them). Batch leader epochs are recorded in the leader-epoch
// cache. max.message.bytes is not applied (as Kafka, for replication).
//
// Errors (nothing is written): *record.CorruptError / *record.InvalidError;
// ErrUnexpectedAppendOffset; ErrLogClosed; I/O errors (batches before the
// failing one stay written).
func (l *Log) AppendAsFollower(batches []byte) (AppendInfo, error) {
	var hs []record.Header
	for rest := batches; len(rest) > 0; {
		h, b, err := record.ValidateIntegrity(rest)
		if err != nil {
			return AppendInfo{}, err
		}
		hs = append(hs, h)
		rest = rest[len(b):]
	}
	if len(hs) == 0 {
		return AppendInfo{FirstOffset: -1, LastOffset: -1, MaxTimestamp: -1, OffsetOfMaxTimestamp: -1, LogAppendTime: -1}, nil
	}
	cfg := l.cfg.Load()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return AppendInfo{}, ErrLogClosed
	}
	next := l.leo.Load()
	for _, h := range hs {
		if h.BaseOffset < next {
			return AppendInfo{}, fmt.Errorf("%w: batch at %d, log end offset or previous batch end %d", ErrUnexpectedAppendOffset, h.BaseOffset, next)
		}
		next = h.NextOffset()
	}
	info := AppendInfo{FirstOffset: hs[0].BaseOffset, MaxTimestamp: record.NoTimestamp, OffsetOfMaxTimestamp: -1, LogAppendTime: -1}
	pos := 0
	var count int64
	for _, h := range hs {
		b := batches[pos : pos+h.Size()]
		pos += h.Size()
		if h.PartitionLeaderEpoch >= 0 {
			if err := l.epochs.Assign(h.PartitionLeaderEpoch, h.BaseOffset); err != nil {
				return info, err
			}
		}
		if err := l.appendLocked(cfg, b, h); err != nil {
			return info, err
		}
		info.LastOffset = h.LastOffset()
		info.RecordCount += h.RecordCount
		info.Bytes += len(b)
		if h.MaxTimestamp > info.MaxTimestamp {
			info.MaxTimestamp, info.OffsetOfMaxTimestamp = h.MaxTimestamp, h.LastOffset()
		}
		count += int64(h.RecordCount)
	}
	return info, l.maybeFlushLocked(cfg, count)
}

// appendLocked writes one batch with assigned offsets, rolling first when
// needed, and publishes the new log end offset.
func (l *Log) appendLocked(cfg *LogConfig, batch []byte, h record.Header) error {
	act := l.segs.Load().active()
	if l.shouldRoll(cfg, act, len(batch), h) {
		var err error
		if act, err = l.rollLocked(cfg, h.BaseOffset); err != nil {
			return err
		}
	}
	if err := act.Append(batch, h); err != nil {
		return err
	}
	l.leo.Store(h.NextOffset())
	return nil
}

// shouldRoll is Kafka's LogSegment.shouldRoll: the batch would push the
// segment past segment.bytes, segment.ms has passed, an index is full, or
// the batch's offsets or position do not fit the segment's 32-bit fields.
func (l *Log) shouldRoll(cfg *LogConfig, s *segment.Segment, size int, h record.Header) bool {
	if s.Size() == 0 {
		return !s.CanHold(size, h.LastOffset())
	}
	return s.Size() > cfg.SegmentBytes-int64(size) ||
		s.ShouldRollForTime(cfg.SegmentMs-l.rollJitter.Load(), h.MaxTimestamp, time.Now()) ||
		s.IndexFull() ||
		!s.CanHold(size, h.LastOffset())
}

// rollLocked makes a new active segment at base newBase. The old active
// segment gets its final time index entry and is fsynced (unless
// SkipRollFsync), which advances the recovery point to newBase.
func (l *Log) rollLocked(cfg *LogConfig, newBase int64) (*segment.Segment, error) {
	cur := l.segs.Load()
	old := cur.active()
	if old.Size() == 0 && old.BaseOffset() == newBase {
		return old, nil
	}
	if err := old.OnBecomeInactive(); err != nil {
		return nil, err
	}
	if !cfg.SkipRollFsync {
		if err := l.syncAllLocked(); err != nil {
			return nil, err
		}
		l.recover.Store(newBase)
	}
	segs := cur.segs
	if old.Size() == 0 {
		// An empty active segment at the wrong base (e.g. after a follower
		// gap) is replaced rather than kept.
		segs = segs[:len(segs)-1]
		_ = old.DeleteFiles()
		old.Release()
	}
	s, err := segment.Create(l.dir, newBase, l.segConfig(cfg))
	if err != nil {
		return nil, err
	}
	next := make([]*segment.Segment, len(segs), len(segs)+1)
	copy(next, segs)
	next = append(next, s)
	l.publish(next)
	l.rollJitter.Store(segmentJitter(cfg))
	if first := next[0].BaseOffset(); l.start.Load() < first {
		l.start.Store(first)
	}
	return s, nil
}

// jitterDraw draws in [0, n) (n > 0); tests replace it.
var jitterDraw = rand.Int64N

// segmentJitter is a new segment's draw of segment.jitter.ms: 0 without
// jitter, else uniform in [0, min(SegmentJitterMs, SegmentMs)) (Kafka's
// LogConfig.randomSegmentJitter).
func segmentJitter(cfg *LogConfig) int64 {
	if cfg.SegmentJitterMs <= 0 || cfg.SegmentMs <= 0 {
		return 0
	}
	return jitterDraw(min(cfg.SegmentJitterMs, cfg.SegmentMs))
}

// syncAllLocked fsyncs every segment with unflushed appends.
func (l *Log) syncAllLocked() error {
	for _, s := range l.segs.Load().segs {
		if err := s.Sync(); err != nil {
			return err
		}
	}
	return nil
}
