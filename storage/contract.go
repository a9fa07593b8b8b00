// Package storage is Gregor's per-partition commit log in Apache Kafka's
// on-disk format: segments of record batches (<base offset>.log) with sparse
// offset (.index) and time (.timeindex) indexes, checkpoints, recovery and
// retention. Sub-packages: record (batch format), compress (codecs).
//
// This file is the contract between the storage engine and its users (the
// partition actor, the fetch path, the log manager). Thread-safety: a Log's
// mutating methods are serialized by an internal mutex (the partition actor
// is the normal writer; retention and truncation may come from other
// goroutines); Read, LogStartOffset, LogEndOffset, OffsetForTimestamp and
// OffsetOfMaxTimestamp are lock-free and safe from any goroutine. Region,
// FetchData, AppendInfo and LogConfig are plain values; FetchData.Release
// must be called once, by its owner.
package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"gregor/storage/record"
	"gregor/storage/segment"
)

// TopicPartition names one partition; its log directory is "<topic>-<partition>".
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String is the partition's directory name, "<topic>-<partition>".
func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// Region is a byte range of a segment file, for zero-copy sends
// (sendfile at an explicit offset; never through the file's shared offset).
type Region struct {
	File *os.File // segment .log file; valid until the owning FetchData is released
	Pos  int64    // byte position in File
	Len  int64    // byte count, always whole batches (never a partial trailing batch)
}

// FetchData is the answer to Log.Read: whole record batches as file regions,
// in offset order. The caller must call Release exactly once after sending;
// until then the segments stay open even if retention deletes them.
//
// Whole batches, unlike Kafka: Kafka's LogSegment.read sends
// min(maxBytes, bytes below the high watermark) and lets the fetching
// client drop a partial trailing batch (franz-go, librdkafka and the Java
// client all do). Gregor keeps whole batches because in-process readers
// parse the regions (the __consumer_offsets loader validates every batch)
// and because finding the end costs the same as Kafka's start lookup: the
// offset index plus a header scan bounded by index.interval.bytes, never a
// walk over the returned batches (see segment.Segment.Read).
type FetchData struct {
	Regions []Region
	Bytes   int64 // sum of Regions[i].Len
	// FirstOffset is the base offset of the first batch returned (≤ the
	// requested offset), or -1 when no batch was returned.
	FirstOffset int64
	release     func()
	// lastSeg and lastEnd locate the end of the last region (for NextOffset).
	lastSeg *segment.Segment
	lastEnd int64
}

// NextOffset is the offset of the first batch after the returned data (the
// upper bound of a read_committed fetch's aborted-transaction search, as
// Kafka's LogSegment.fetchUpperBoundOffset), or -1 when nothing was
// returned. It reads that batch's 8-byte base offset when it is in the
// same segment, else takes the segment's next offset (which a concurrent
// append may have moved on: the bound is then higher than the data, which
// can only list more aborted transactions, never fewer). Call it before
// Release.
func (d *FetchData) NextOffset() int64 {
	s := d.lastSeg
	if s == nil {
		return -1
	}
	if d.lastEnd+record.LogOverhead <= s.Size() {
		var b [8]byte
		if _, err := s.File().ReadAt(b[:], d.lastEnd); err == nil {
			return int64(binary.BigEndian.Uint64(b[:]))
		}
	}
	return s.NextOffset()
}

// AbortedTxn is one aborted transaction of a partition (a .txnindex entry,
// see segment.AbortedTxn).
type AbortedTxn = segment.AbortedTxn

// NewFetchData builds a FetchData whose Release calls release (may be nil).
func NewFetchData(regions []Region, firstOffset int64, release func()) FetchData {
	var n int64
	for _, r := range regions {
		n += r.Len
	}
	return FetchData{Regions: regions, Bytes: n, FirstOffset: firstOffset, release: release}
}

// Release drops the segment references held by this read. Idempotent.
func (d *FetchData) Release() {
	if d.release != nil {
		d.release()
		d.release = nil
	}
}

// AppendInfo describes an appended batch.
type AppendInfo struct {
	FirstOffset          int64 // offset of the first record (base offset)
	LastOffset           int64 // offset of the last record
	MaxTimestamp         int64 // ms; the batch's maxTimestamp (or log append time)
	OffsetOfMaxTimestamp int64
	LogAppendTime        int64 // ms; -1 unless message.timestamp.type=LogAppendTime stamped it
	RecordCount          int32
	Bytes                int // batch size in bytes
}

// LogConfig is the per-log configuration (topic config over broker defaults).
// Field docs name the Kafka topic config and its broker-wide default key.
type LogConfig struct {
	// SegmentBytes: segment.bytes (log.segment.bytes), default 1 GiB.
	SegmentBytes int64
	// SegmentMs: segment.ms (log.roll.ms / log.roll.hours), default 7 days; roll by age of the first batch.
	SegmentMs int64
	// SegmentJitterMs: segment.jitter.ms (log.roll.jitter.ms /
	// log.roll.jitter.hours), default 0: each segment rolls by time
	// segment.ms minus a random jitter in [0, min(SegmentJitterMs,
	// SegmentMs)), drawn when it is created (Kafka's
	// LogConfig.randomSegmentJitter), so logs created together do not all
	// roll at once.
	SegmentJitterMs int64
	// SegmentIndexBytes: segment.index.bytes (log.index.size.max.bytes), default 10 MiB; roll when the index is full.
	SegmentIndexBytes int32
	// IndexIntervalBytes: index.interval.bytes (log.index.interval.bytes), default 4096.
	IndexIntervalBytes int32
	// RetentionMs: retention.ms (log.retention.ms/minutes/hours), default 7 days; -1 keeps forever.
	RetentionMs int64
	// RetentionBytes: retention.bytes (log.retention.bytes), default -1 (unlimited).
	RetentionBytes int64
	// FlushMessages: flush.messages (log.flush.interval.messages), default MaxInt64 (never by count).
	FlushMessages int64
	// FlushMs: flush.ms (log.flush.interval.ms), default MaxInt64 (never by time).
	FlushMs int64
	// FileDeleteDelayMs: file.delete.delay.ms (log.segment.delete.delay.ms), default 60000.
	FileDeleteDelayMs int64
	// MaxMessageBytes: max.message.bytes (message.max.bytes), default 1048588; largest batch accepted.
	MaxMessageBytes int32
	// Compact: cleanup.policy contains "compact" (keys required; the log
	// cleaner keeps the last record per key).
	Compact bool
	// DeleteDisabled: cleanup.policy lacks "delete" (it is "compact"
	// alone), so retention.ms and retention.bytes delete nothing; the log
	// start offset (DeleteRecords) still does. The zero value keeps
	// Kafka's default policy "delete".
	DeleteDisabled bool
	// DeleteRetentionMs: delete.retention.ms (log.cleaner.delete.retention.ms),
	// default 86400000: how long a tombstone survives after the cleaner
	// first rewrote its batch (the batch's delete horizon, KIP-534).
	DeleteRetentionMs int64
	// MinCleanableDirtyRatio: min.cleanable.dirty.ratio
	// (log.cleaner.min.cleanable.ratio), default 0.5: the cleaner compacts
	// a log once dirty bytes / total bytes of its cleanable part reach it.
	MinCleanableDirtyRatio float64
	// MinCompactionLagMs: min.compaction.lag.ms
	// (log.cleaner.min.compaction.lag.ms), default 0: a segment whose
	// newest record is younger is not cleaned yet.
	MinCompactionLagMs int64
	// MaxCompactionLagMs: max.compaction.lag.ms
	// (log.cleaner.max.compaction.lag.ms), default MaxInt64: a dirty
	// segment older than this is cleaned whatever the dirty ratio.
	MaxCompactionLagMs int64
	// CompressionType: compression.type (compression.type), default
	// "producer". The codec batches are stored with: "producer" (or "")
	// keeps the producer's codec; "uncompressed", "gzip", "snappy", "lz4"
	// or "zstd" make the produce path recompress batches written with
	// another codec, as Kafka's LogValidator does.
	CompressionType string
	// LogAppendTime: message.timestamp.type (log.message.timestamp.type)
	// is "LogAppendTime", default false ("CreateTime"). The broker stamps
	// each produced batch with its clock and returns that time in the
	// produce response.
	LogAppendTime bool
	// MessageTimestampDifferenceMaxMs: message.timestamp.difference.max.ms
	// (log.message.timestamp.difference.max.ms), default MaxInt64: how far
	// (ms, either direction) a CreateTime record's timestamp may be from the
	// broker's clock. A value <= 0 means no bound, so a zero LogConfig stays
	// permissive (Kafka's literal 0, "exactly the broker's millisecond", is
	// therefore not supported).
	MessageTimestampDifferenceMaxMs int64
	// MessageTimestampBeforeMaxMs and MessageTimestampAfterMaxMs:
	// message.timestamp.before.max.ms and message.timestamp.after.max.ms
	// (log.message.timestamp.before/after.max.ms, KIP-937, Kafka 3.6+),
	// default MaxInt64: how far (ms) a CreateTime timestamp may lie before
	// and after the broker's clock. As Kafka's LogConfig, a side left at
	// MaxInt64 (or <= 0, the zero LogConfig) takes
	// MessageTimestampDifferenceMaxMs, the deprecated key.
	MessageTimestampBeforeMaxMs, MessageTimestampAfterMaxMs int64
	// DownConversionDisabled: message.downconversion.enable
	// (log.message.downconversion.enable) is false: consumers fetching
	// with Fetch v0-v3 (message formats v0/v1) get UNSUPPORTED_VERSION for
	// the partition instead of down-converted data. Inverted so the zero
	// LogConfig keeps Kafka's default (enabled).
	DownConversionDisabled bool
	// SkipRollFsync turns off the fsync of the old segment when the log
	// rolls (not a Kafka config: Kafka flushes rolled segments in the
	// background). For benchmarks and tests; leave false in production.
	SkipRollFsync bool
}

// DefaultLogConfig returns Kafka's defaults.
func DefaultLogConfig() LogConfig {
	const maxInt64 = int64(^uint64(0) >> 1)
	return LogConfig{
		SegmentBytes:       1 << 30,
		SegmentMs:          7 * 24 * 3600 * 1000,
		SegmentIndexBytes:  10 << 20,
		IndexIntervalBytes: 4096,
		RetentionMs:        7 * 24 * 3600 * 1000,
		RetentionBytes:     -1,
		FlushMessages:      maxInt64,
		FlushMs:            maxInt64,
		FileDeleteDelayMs:  60000,
		MaxMessageBytes:    1048588,

		DeleteRetentionMs:      86400000,
		MinCleanableDirtyRatio: 0.5,
		MaxCompactionLagMs:     maxInt64,

		CompressionType:                 "producer",
		MessageTimestampDifferenceMaxMs: maxInt64,
		MessageTimestampBeforeMaxMs:     maxInt64,
		MessageTimestampAfterMaxMs:      maxInt64,
	}
}

// ErrOffsetOutOfRange: the requested offset is below the log start offset or
// above the log end offset (Kafka OFFSET_OUT_OF_RANGE, error code 1).
var ErrOffsetOutOfRange = errors.New("offset out of range")

// ErrLogClosed: the log was closed (its partition is moving or stopping).
var ErrLogClosed = errors.New("log closed")

// ErrRecordTooLarge: the batch exceeds max.message.bytes (MESSAGE_TOO_LARGE, code 10).
var ErrRecordTooLarge = errors.New("record batch larger than max.message.bytes")
