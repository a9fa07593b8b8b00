package record

// Conversions between message formats v0/v1 and record batches (magic 2):
// up on produce (Kafka's LogValidator converting to the log's magic 2),
// down on fetch for consumers whose Fetch version implies an older magic
// (Kafka's RecordsUtil.downConvert).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"gregor/storage/compress"
)

// ErrDownConvertZstd is returned by DownConvert for a zstd batch: magic
// 0/1 have no zstd codec (Kafka: UnsupportedCompressionTypeException
// "Down-conversion of zstandard-compressed batches is not supported").
var ErrDownConvertZstd = errors.New("Down-conversion of zstandard-compressed batches is not supported")

// LegacyToBatch builds one record batch (magic 2, base offset 0, no
// producer id, CreateTime) holding the messages of set in order, written
// with codec: the partition assigns the offsets on append, as Kafka's
// LogValidator does (inner offsets of the old set are not kept). Keys,
// values (nil = null) and timestamps are kept; a magic-0 message's
// timestamp is NoTimestamp (-1). Errors come from the builder.
func LegacyToBatch(set LegacySet, codec Codec) ([]byte, error) {
	if len(set.Messages) == 0 {
		return nil, fmt.Errorf("%w: an empty legacy message set", ErrBadBatchInput)
	}
	base := set.Messages[0].Timestamp
	recs := make([]BatchRecord, len(set.Messages))
	for i := range set.Messages {
		m := &set.Messages[i]
		recs[i] = BatchRecord{Key: m.Key, Value: m.Value, TimestampDelta: m.Timestamp - base}
	}
	return BuildBatch(BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: base, Codec: codec}, recs)
}

// AppendLegacyMessage appends one v0/v1 message set entry (offset,
// message_size, crc, magic, attributes, [timestamp], key, value) to dst.
// timestamp is ignored for magic 0; nil key or value are written as null.
func AppendLegacyMessage(dst []byte, offset int64, magic, attributes int8, timestamp int64, key, value []byte) []byte {
	size := LegacyOverheadV0 + len(key) + len(value)
	if magic >= 1 {
		size += 8
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(offset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(size))
	crcAt := len(dst)
	dst = append(dst, 0, 0, 0, 0, byte(magic), byte(attributes))
	if magic >= 1 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(timestamp))
	}
	dst = appendLegacyBytes(dst, key)
	dst = appendLegacyBytes(dst, value)
	binary.BigEndian.PutUint32(dst[crcAt:], crc32.ChecksumIEEE(dst[crcAt+4:]))
	return dst
}

func appendLegacyBytes(dst, p []byte) []byte {
	if p == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(p)))
	return append(dst, p...)
}

// DownConvert appends record batch (magic 2, as stored) converted to
// message format magic (0 or 1) to dst, as Kafka's RecordsUtil.downConvert:
//
//   - control batches are dropped (old formats have no markers): nothing
//     is appended;
//   - an uncompressed batch becomes one message per record at its absolute
//     offset, records below firstOffset (the fetch offset) dropped;
//   - a compressed batch becomes one wrapper message with the same codec
//     holding every record: inner offsets absolute for magic 0, relative
//     to the first record for magic 1, the wrapper's offset the last
//     record's; magic-0 lz4 frames carry the pre-0.10 header checksum;
//   - magic 1 keeps timestamps and the timestamp type (a LogAppendTime
//     batch's messages carry its append time and the LogAppendTime bit);
//     magic 0 has no timestamps; record headers are dropped.
//
// The batch is decompressed to at most maxUncompressed bytes. Errors:
// ErrDownConvertZstd for zstd; *CorruptError / *InvalidError for a damaged
// batch (dst is then returned as given).
func DownConvert(dst, batch []byte, magic int8, firstOffset int64, maxUncompressed int) ([]byte, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return dst, err
	}
	if len(batch) < h.Size() {
		return dst, errTruncated(len(batch), h.Size())
	}
	batch = batch[:h.Size()]
	if h.IsControl() {
		return dst, nil
	}
	codec := h.Codec()
	if codec == CodecZstd {
		return dst, ErrDownConvertZstd
	}
	var attrs int8
	if magic >= 1 && h.IsLogAppendTime() {
		attrs = legacyAttrTimestampType
	}
	start := len(dst)
	if codec == CodecNone {
		err := Records(h, batch, maxUncompressed, func(r *Record) error {
			off := r.Offset(&h)
			if off < firstOffset {
				return nil
			}
			dst = AppendLegacyMessage(dst, off, magic, attrs, r.Timestamp(&h), r.Key, r.Value)
			return nil
		})
		if err != nil {
			return dst[:start], err
		}
		return dst, nil
	}
	bp := scratchPool.Get().(*[]byte)
	inner := (*bp)[:0]
	defer func() {
		if cap(inner) <= maxPooledDecode {
			*bp = inner[:0]
			scratchPool.Put(bp)
		}
	}()
	first, last, maxTs := int64(-1), int64(-1), NoTimestamp
	err = Records(h, batch, maxUncompressed, func(r *Record) error {
		off := r.Offset(&h)
		if first < 0 {
			first = off
		}
		innerOff := off
		if magic >= 1 {
			innerOff = off - first
		}
		ts := r.Timestamp(&h)
		maxTs = max(maxTs, ts)
		inner = AppendLegacyMessage(inner, innerOff, magic, attrs, ts, r.Key, r.Value)
		last = off
		return nil
	})
	if err != nil {
		return dst, err
	}
	if first < 0 {
		return dst, nil // an empty batch (compaction keeps those): nothing to send
	}
	value, err := compress.Encode(int8(codec), nil, inner)
	if err != nil {
		return dst, &CorruptError{Reason: fmt.Sprintf("%s compression: %v", codec, err), Err: err}
	}
	if codec == CodecLZ4 && magic == 0 {
		if err := compress.BreakLegacyLZ4Checksum(value); err != nil {
			return dst, &CorruptError{Reason: err.Error(), Err: err}
		}
	}
	wrapperTs := maxTs
	if h.IsLogAppendTime() {
		wrapperTs = h.MaxTimestamp
	}
	return AppendLegacyMessage(dst, last, magic, attrs|int8(codec), wrapperTs, nil, value), nil
}
