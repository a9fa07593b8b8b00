package handlers

import (
	"time"

	"gregor/partition"
	"gregor/storage"
)

// ReplicaSource is what the data-path handlers (Produce, Fetch, ListOffsets,
// InitProducerId, DeleteRecords) need from the replica manager; the
// *partition.Manager implements it.
type ReplicaSource interface {
	// Get returns the handle of a partition hosted on this broker; false
	// means UNKNOWN_TOPIC_OR_PARTITION.
	Get(tp storage.TopicPartition) (*partition.Handle, bool)
	// NextProducerID allocates a producer id never handed out before
	// (InitProducerId).
	NextProducerID() (int64, error)
	// DeleteRecords advances a partition's log start offset to offset
	// (-1 = high watermark), waiting at most timeout (DeleteRecords API).
	DeleteRecords(tp storage.TopicPartition, offset int64, timeout time.Duration) partition.DeleteRecordsResult
}

var _ ReplicaSource = (*partition.Manager)(nil)

// The replica manager moves logs between dirs (34_alter_replica_log_dirs.go).
var _ LogDirMover = (*partition.Manager)(nil)

// LogDirSource describes the broker's log dirs for DescribeLogDirs (API
// 35); the *storage.LogManager implements it.
type LogDirSource interface {
	// DescribeDirs lists every configured log dir (log.dirs) with its
	// state, filesystem space and hosted partition logs.
	DescribeDirs() []storage.DirDescription
}

var _ LogDirSource = (*storage.LogManager)(nil)
