package partition

import (
	"time"

	"gregor/storage"
	"gregor/storage/record"
)

// AppendOptions mirrors storage.AppendOptions (the agreed Log API): the
// leader epoch stamped into the batch, the log append time (ms, -1 = keep
// CreateTime) and whether the caller already validated the batch.
type AppendOptions struct {
	LeaderEpoch   int32
	LogAppendTime int64
	PreValidated  bool
}

// Log is the part of one partition's storage log (storage.Log) that the
// partition actor and the data-path handlers use. The actor is its only
// writer; Read and the offset getters are safe from any goroutine.
// Errors are storage's: storage.ErrOffsetOutOfRange, storage.ErrLogClosed,
// storage.ErrRecordTooLarge, *record.CorruptError, *record.InvalidError.
type Log interface {
	Append(batch []byte, opts AppendOptions) (storage.AppendInfo, error)
	Read(offset, maxBytes, upperBound int64) (storage.FetchData, error)
	LogStartOffset() int64
	LogEndOffset() int64
	OffsetForTimestamp(ts int64) (offset, timestamp int64, found bool, err error)
	OffsetOfMaxTimestamp() (offset, timestamp int64)
	ScanBatches(from int64, fn func(h record.Header) bool) error
	DeleteRecordsBefore(offset int64) error
	// EndOffsetForEpoch: KIP-101/279 leader-epoch lookup ((-1,-1) when unknown).
	EndOffsetForEpoch(epoch int32) (int32, int64)
	Config() storage.LogConfig
	SetConfig(storage.LogConfig)
}

// LogStore is the part of storage.LogManager the replica manager and the
// log-manager actor use.
type LogStore interface {
	// GetOrCreate opens or creates the partition's log with cfg.
	GetOrCreate(tp TopicPartition, cfg storage.LogConfig) (Log, error)
	// Reopen closes the partition's log if open and opens it again
	// (recovery when it was not closed cleanly): used by a restarting actor.
	Reopen(tp TopicPartition) (Log, error)
	// Delete closes and removes the partition's log.
	Delete(tp TopicPartition) error
	// HighWatermarks are the high watermarks read from
	// replication-offset-checkpoint when the store was opened.
	HighWatermarks() map[TopicPartition]int64
	CheckpointHighWatermarks(hw map[TopicPartition]int64) error
	// CheckpointRecoveryPoints writes recovery-point-offset-checkpoint,
	// CheckpointLogStartOffsets log-start-offset-checkpoint (storage.LogManager's).
	CheckpointRecoveryPoints() error
	CheckpointLogStartOffsets() error
	RetentionPass(now time.Time) (segmentsDeleted int, err error)
	FlushPass(now time.Time) error
}

// FollowerLog is the part of storage.Log a follower replica needs on top
// of Log: appending the leader's batches with their offsets and epochs,
// and truncation (KIP-101/279). StorageLog implements it; a Log without it
// cannot follow (its appends fail with KAFKA_STORAGE_ERROR).
type FollowerLog interface {
	// AppendAsFollower appends whole batches that already carry offsets
	// (storage.Log.AppendAsFollower): storage.ErrUnexpectedAppendOffset
	// when they do not continue the log.
	AppendAsFollower(batches []byte) (storage.AppendInfo, error)
	// TruncateTo drops every batch at or above offset.
	TruncateTo(offset int64) error
	// TruncateFullyAndStartAt empties the log and restarts it at offset.
	TruncateFullyAndStartAt(offset int64) error
	// LatestEpoch is the newest leader epoch in the log's epoch cache.
	LatestEpoch() (epoch int32, ok bool)
}
