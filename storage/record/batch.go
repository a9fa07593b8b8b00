// Package record reads and validates Kafka record batches (magic 2, the
// "v2 message format" of KIP-98) in place, without copying the batch bytes.
//
// Layout of a batch (offsets in bytes from the start of the batch):
//
//	0  baseOffset           int64
//	8  batchLength          int32   bytes after this field
//	12 partitionLeaderEpoch int32
//	16 magic                int8    must be 2
//	17 crc                  uint32  CRC-32C of bytes [21, end)
//	21 attributes           int16
//	23 lastOffsetDelta      int32
//	27 baseTimestamp        int64
//	35 maxTimestamp         int64
//	43 producerId           int64
//	51 producerEpoch        int16
//	53 baseSequence         int32
//	57 recordCount          int32
//	61 records...
//
// The CRC does not cover baseOffset, batchLength or partitionLeaderEpoch, so
// the broker may rewrite those in place (offset assignment, leader epoch
// stamping) without recomputing it.
package record

import (
	"encoding/binary"
	"hash/crc32"
)

// Byte offsets of the v2 batch header fields.
const (
	OffBaseOffset      = 0
	OffBatchLength     = 8
	OffLeaderEpoch     = 12
	OffMagic           = 16
	OffCRC             = 17
	OffAttributes      = 21
	OffLastOffsetDelta = 23
	OffBaseTimestamp   = 27
	OffMaxTimestamp    = 35
	OffProducerID      = 43
	OffProducerEpoch   = 51
	OffBaseSequence    = 53
	OffRecordCount     = 57

	// HeaderSize is the size of a v2 batch header, in bytes (61).
	HeaderSize = 61
	// LogOverhead is baseOffset + batchLength (12 bytes): the part of a batch
	// that batchLength does not count.
	LogOverhead = 12
)

// Attribute bits (attributes int16 of the batch header).
const (
	AttrCompressionMask  = 0x07
	AttrTimestampType    = 0x08 // 1 = LogAppendTime
	AttrTransactional    = 0x10
	AttrControl          = 0x20
	AttrDeleteHorizonSet = 0x40
	NoProducerID         = int64(-1)
	NoSequence           = int32(-1)
	NoTimestamp          = int64(-1)
)

// Codec is the compression codec id in the low three attribute bits.
type Codec int8

// Kafka's codec ids (compression.type).
const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

// String gives Kafka's name for the codec (compression.type values).
func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return "unknown"
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is the decoded fixed part of a v2 record batch.
type Header struct {
	BaseOffset           int64
	BatchLength          int32 // bytes after the batchLength field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64 // ms since epoch
	MaxTimestamp         int64 // ms since epoch
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	RecordCount          int32
}

// Size is the whole batch size in bytes (LogOverhead + BatchLength).
func (h *Header) Size() int { return LogOverhead + int(h.BatchLength) }

// LastOffset is BaseOffset + LastOffsetDelta.
func (h *Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset after this batch (LastOffset + 1).
func (h *Header) NextOffset() int64 { return h.LastOffset() + 1 }

// Codec is the batch's compression codec.
func (h *Header) Codec() Codec { return Codec(h.Attributes & AttrCompressionMask) }

// IsLogAppendTime reports the timestamp type bit (message.timestamp.type=LogAppendTime).
func (h *Header) IsLogAppendTime() bool { return h.Attributes&AttrTimestampType != 0 }

// IsTransactional reports the transactional bit.
func (h *Header) IsTransactional() bool { return h.Attributes&AttrTransactional != 0 }

// IsControl reports the control-batch bit (transaction markers).
func (h *Header) IsControl() bool { return h.Attributes&AttrControl != 0 }

// HasProducerID reports whether the batch came from an idempotent producer.
func (h *Header) HasProducerID() bool { return h.ProducerID >= 0 }

// LastSequence is the sequence of the last record, wrapping at int32 max as Kafka does.
func (h *Header) LastSequence() int32 {
	if h.BaseSequence == NoSequence {
		return NoSequence
	}
	s := int64(h.BaseSequence) + int64(h.LastOffsetDelta)
	if s > int64(^uint32(0)>>1) {
		s -= int64(^uint32(0)>>1) + 1
	}
	return int32(s)
}

// ParseHeader decodes the header of the batch at the start of b. It checks
// only that the header is present and batchLength is sane; it does not check
// the magic byte or the CRC (see Validate).
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderSize {
		return h, errTruncated(len(b), HeaderSize)
	}
	h.BaseOffset = int64(binary.BigEndian.Uint64(b[OffBaseOffset:]))
	h.BatchLength = int32(binary.BigEndian.Uint32(b[OffBatchLength:]))
	h.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(b[OffLeaderEpoch:]))
	h.Magic = int8(b[OffMagic])
	h.CRC = binary.BigEndian.Uint32(b[OffCRC:])
	h.Attributes = int16(binary.BigEndian.Uint16(b[OffAttributes:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(b[OffLastOffsetDelta:]))
	h.BaseTimestamp = int64(binary.BigEndian.Uint64(b[OffBaseTimestamp:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(b[OffMaxTimestamp:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(b[OffProducerID:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(b[OffProducerEpoch:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(b[OffBaseSequence:]))
	h.RecordCount = int32(binary.BigEndian.Uint32(b[OffRecordCount:]))
	if int(h.BatchLength) < HeaderSize-LogOverhead {
		return h, &CorruptError{Reason: "batch length shorter than the header", Field: "batchLength", Value: int64(h.BatchLength)}
	}
	return h, nil
}

// ComputeCRC returns the CRC-32C of the batch's bytes from attributes to the end.
func ComputeCRC(batch []byte) uint32 {
	return crc32.Checksum(batch[OffAttributes:], castagnoli)
}

// SetBaseOffset rewrites the base offset in place (not covered by the CRC).
func SetBaseOffset(batch []byte, off int64) {
	binary.BigEndian.PutUint64(batch[OffBaseOffset:], uint64(off))
}

// SetPartitionLeaderEpoch rewrites the partition leader epoch in place (not covered by the CRC).
func SetPartitionLeaderEpoch(batch []byte, epoch int32) {
	binary.BigEndian.PutUint32(batch[OffLeaderEpoch:], uint32(epoch))
}

// SetLogAppendTime sets the timestamp-type bit and maxTimestamp to ts and
// recomputes the CRC (both fields are covered by it), as Kafka does for
// message.timestamp.type=LogAppendTime.
func SetLogAppendTime(batch []byte, ts int64) {
	attrs := binary.BigEndian.Uint16(batch[OffAttributes:]) | AttrTimestampType
	binary.BigEndian.PutUint16(batch[OffAttributes:], attrs)
	binary.BigEndian.PutUint64(batch[OffMaxTimestamp:], uint64(ts))
	binary.BigEndian.PutUint32(batch[OffCRC:], ComputeCRC(batch))
}

// DeleteHorizonMs returns the batch's delete horizon (KIP-534: a compacted
// batch whose tombstones may be removed after this time, stored as the
// baseTimestamp when the delete-horizon attribute bit is set) and whether it
// is set. kafka-dump-log prints it as deleteHorizonMs.
func (h *Header) DeleteHorizonMs() (int64, bool) {
	if h.Attributes&AttrDeleteHorizonSet == 0 {
		return 0, false
	}
	return h.BaseTimestamp, true
}
