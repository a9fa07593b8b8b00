package storage

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"gregor/storage/checkpoint"
	"gregor/storage/segment"
)

// AppendOptions are the leader-side parameters of Log.Append. Plain value.
type AppendOptions struct {
	// LeaderEpoch is stamped into the batch's partitionLeaderEpoch and
	// recorded in the leader-epoch cache when new; -1 leaves the batch as is.
	LeaderEpoch int32
	// LogAppendTime in ms; -1 keeps CreateTime. When >= 0 the batch is
	// stamped with record.SetLogAppendTime (message.timestamp.type=LogAppendTime).
	LogAppendTime int64
	// PreValidated: the caller already ran record.Validate and
	// record.ValidateRecords on this batch, so Append skips them.
	PreValidated bool
}

// OpenOptions are the per-partition facts a Log is opened with (the
// LogManager reads them from the log dir's checkpoint files). Plain value.
type OpenOptions struct {
	// RecoveryPoint: offset below which the log is known flushed
	// (recovery-point-offset-checkpoint); segments from it on are
	// re-validated after an unclean shutdown. 0 = re-validate everything.
	RecoveryPoint int64
	// LogStartOffset from log-start-offset-checkpoint (0 when unknown).
	LogStartOffset int64
	// CleanShutdown: the log dir held .kafka_cleanshutdown; skip recovery.
	CleanShutdown bool
	// TopicID, when non-nil, is written to partition.metadata (KIP-516).
	TopicID *[16]byte
	// Logger for recovery and retention events; nil = no logging.
	Logger *zap.Logger
	// FileCache bounds the open segment files of every log sharing it
	// (the LogManager's, sized by log.segment.fd.cache.size); nil =
	// segment.DefaultFileCache().
	FileCache *segment.FileCache
	// DeferRecoverySync skips the fsync after each recovered segment: the
	// caller syncs the log dir's file system once (syncfs) after opening
	// all its logs and before any recovery point is checkpointed
	// (LogManager: 20,000 logs recovered after a kill -9 are 20,000
	// fsyncs otherwise). false = each recovered segment is fsynced.
	DeferRecoverySync bool
}

// segList is an immutable snapshot of a log's segments in base offset order;
// the last one is the active segment.
type segList struct {
	segs []*segment.Segment
}

func (s *segList) active() *segment.Segment { return s.segs[len(s.segs)-1] }

// find returns the index of the segment whose range holds offset (the last
// segment with base <= offset), or -1.
func (s *segList) find(offset int64) int {
	lo, hi := 0, len(s.segs)
	for lo < hi {
		m := (lo + hi) / 2
		if s.segs[m].BaseOffset() <= offset {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

type pendingDelete struct {
	seg *segment.Segment
	due time.Time
}

// Log is one partition's log in directory <log.dir>/<topic>-<partition>.
//
// Thread-safety: mutating methods (Append, AppendAsFollower, TruncateTo,
// TruncateFullyAndStartAt, DeleteRecordsBefore, Flush, Close, SetConfig and
// the LogManager's retention and flush passes) are serialized by an internal
// mutex; the partition actor is the normal writer. Read, LogStartOffset,
// LogEndOffset, OffsetForTimestamp, OffsetOfMaxTimestamp, ScanBatches, Size
// and Config are lock-free (atomic snapshot of the segment list) and safe
// from any goroutine.
type Log struct {
	dir    string
	tp     TopicPartition
	logger *zap.Logger

	mu      sync.Mutex // serializes writers
	cfg     atomic.Pointer[LogConfig]
	segs    atomic.Pointer[segList]
	leo     atomic.Int64
	start   atomic.Int64
	recover atomic.Int64 // recovery point: everything below is fsynced
	hw      atomic.Int64 // high watermark as last told (-1 unknown); bounds retention
	lso     atomic.Int64 // last stable offset as last told (-1 unknown); bounds the cleaner
	// rollJitter is the active segment's segment.jitter.ms draw (ms off
	// segment.ms), drawn at open and at each roll.
	rollJitter atomic.Int64
	closed     atomic.Bool
	epochs     *LeaderEpochCache
	files      *segment.FileCache

	unflushedMsgs int64
	lastFlush     time.Time
	pending       []pendingDelete
	topicID       atomic.Pointer[[16]byte]
}

// ParseTopicPartition splits a partition directory name "<topic>-<partition>".
func ParseTopicPartition(name string) (TopicPartition, error) {
	i := len(name) - 1
	for i >= 0 && name[i] >= '0' && name[i] <= '9' {
		i--
	}
	if i <= 0 || i == len(name)-1 || name[i] != '-' || len(name)-i-1 > 10 {
		return TopicPartition{}, fmt.Errorf("%q is not a <topic>-<partition> directory name", name)
	}
	var p int64
	for _, c := range name[i+1:] {
		p = p*10 + int64(c-'0')
	}
	if p > 1<<31-1 {
		return TopicPartition{}, fmt.Errorf("%q: partition out of range", name)
	}
	return TopicPartition{Topic: name[:i], Partition: int32(p)}, nil
}

// TopicPartition is the partition this log holds.
func (l *Log) TopicPartition() TopicPartition { return l.tp }

// Dir is the partition directory.
func (l *Log) Dir() string { return l.dir }

// Config returns the current log config.
func (l *Log) Config() LogConfig { return *l.cfg.Load() }

// SetConfig replaces the log config (a topic config change); it applies to
// the next append, roll and retention pass.
func (l *Log) SetConfig(cfg LogConfig) { l.cfg.Store(&cfg) }

// LogStartOffset is the first offset a consumer may read.
func (l *Log) LogStartOffset() int64 { return l.start.Load() }

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 { return l.leo.Load() }

// RecoveryPoint is the offset below which the log is fsynced
// (recovery-point-offset-checkpoint).
func (l *Log) RecoveryPoint() int64 { return l.recover.Load() }

// SetHighWatermark tells the log the partition's high watermark: retention
// then deletes only segments wholly below it, as Kafka does. -1 = unknown
// (retention is then bounded by the active segment only).
func (l *Log) SetHighWatermark(hw int64) { l.hw.Store(hw) }

// SetLastStableOffset tells the log the partition's last stable offset:
// the cleaner leaves segments from the one holding it on alone, so records
// of undecided transactions are never compacted away (Kafka's
// cleanableOffsets bounds by the first unstable offset). -1 = unknown (the
// high watermark alone bounds it).
func (l *Log) SetLastStableOffset(lso int64) { l.lso.Store(lso) }

// LeaderEpochs is the partition's leader-epoch cache.
func (l *Log) LeaderEpochs() *LeaderEpochCache { return l.epochs }

// Size is the total byte size of the log's segment files (.log only).
func (l *Log) Size() int64 {
	var n int64
	for _, s := range l.segs.Load().segs {
		n += s.Size()
	}
	return n
}

// NumSegments is the number of segments (for tests and metrics).
func (l *Log) NumSegments() int { return len(l.segs.Load().segs) }

// TopicID returns the KIP-516 topic id from partition.metadata; ok false
// when none was set.
func (l *Log) TopicID() (id [16]byte, ok bool) {
	if p := l.topicID.Load(); p != nil {
		return *p, true
	}
	return id, false
}

// SetTopicID writes partition.metadata with the topic id.
func (l *Log) SetTopicID(id [16]byte) error {
	if err := checkpoint.WritePartitionMetadata(l.dir, id); err != nil {
		return err
	}
	l.topicID.Store(&id)
	return nil
}

func (l *Log) segConfig(cfg *LogConfig) segment.Config {
	return segment.Config{IndexIntervalBytes: cfg.IndexIntervalBytes, MaxIndexBytes: cfg.SegmentIndexBytes, Files: l.files}
}

// maxUncompressed bounds decompression while validating a batch: 32 times
// max.message.bytes, at least 32 MiB (Kafka has no such bound; this one
// keeps a decompression bomb from exhausting memory).
func maxUncompressed(cfg *LogConfig) int {
	return int(max(int64(cfg.MaxMessageBytes)*32, 32<<20))
}

// maxRecoverBatch bounds one batch's length field during recovery:
// max.message.bytes, at least 16 MiB (a follower may have written batches
// larger than the topic's current max.message.bytes).
func maxRecoverBatch(cfg *LogConfig) int {
	return int(max(int64(cfg.MaxMessageBytes), 16<<20))
}

func (l *Log) epochPath() string { return filepath.Join(l.dir, checkpoint.LeaderEpochFile) }

func (l *Log) publish(segs []*segment.Segment) { l.segs.Store(&segList{segs: segs}) }
