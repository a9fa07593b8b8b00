package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"gregor/storage/compress"
)

// BatchRecord is one record handed to the builder. Key and Value keep the
// nil-versus-empty distinction of the wire format: nil is encoded as length
// -1 (a null key, or a null value = tombstone), an empty non-nil slice as
// length 0.
type BatchRecord struct {
	Key     []byte
	Value   []byte
	Headers []RecordHeader // header keys must be non-nil (Kafka rejects null header keys)
	// TimestampDelta is the record's timestamp minus BatchOptions.BaseTimestamp, in ms.
	TimestampDelta int64
	// OffsetDelta is the record's offset minus the batch's base offset. It is
	// used only when BatchOptions.KeepOffsetDeltas is set; otherwise records
	// get 0, 1, 2, … in order (what every producer writes).
	OffsetDelta int32
}

// Producer identifies an idempotent or transactional producer (KIP-98): the
// batch header's producerId, producerEpoch and baseSequence.
type Producer struct {
	ID           int64
	Epoch        int16
	BaseSequence int32
}

// BatchOptions are the header fields of a batch built by AppendBatch /
// BuildBatch. The zero value builds a plain uncompressed CreateTime batch at
// base offset 0 with no producer id (producerId -1, producerEpoch -1,
// baseSequence -1).
type BatchOptions struct {
	BaseOffset int64
	// PartitionLeaderEpoch is written as is. Producers send -1
	// (NO_PARTITION_LEADER_EPOCH); the leader stamps its epoch on append.
	PartitionLeaderEpoch int32
	// BaseTimestamp is the first timestamp of the batch in ms since the
	// epoch; record timestamps are BaseTimestamp + TimestampDelta.
	BaseTimestamp int64
	// LogAppendTime sets the timestamp-type attribute bit
	// (message.timestamp.type=LogAppendTime); the batch's maxTimestamp is
	// then AppendTime instead of the largest record timestamp.
	LogAppendTime bool
	// AppendTime is the log append time in ms, used only with LogAppendTime.
	AppendTime int64
	// Codec compresses the records section (compression.type).
	Codec Codec
	// Transactional and Control set the attribute bits of the same names.
	Transactional bool
	Control       bool
	// Producer is nil for batches without a producer id.
	Producer *Producer
	// KeepOffsetDeltas makes the builder write each BatchRecord.OffsetDelta
	// as given (for rewriting compacted batches, whose deltas have gaps).
	// The deltas must increase strictly. lastOffsetDelta is then
	// max(LastOffsetDelta, last record's delta), so a compacted batch keeps
	// its original offset range; with KeepOffsetDeltas an empty record list
	// is allowed (Kafka keeps empty batches to retain producer state).
	KeepOffsetDeltas bool
	LastOffsetDelta  int32
}

// ErrBadBatchInput is wrapped by every AppendBatch error caused by its input
// (a nil header key, decreasing offset deltas, no records, an unknown codec).
var ErrBadBatchInput = errors.New("record: bad batch builder input")

// scratchPool holds buffers for the uncompressed records section of
// compressed batches, so steady-state recompression does not allocate it.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// BuildBatch returns a new magic-2 record batch holding recs, with a valid
// CRC-32C. See AppendBatch.
func BuildBatch(opts BatchOptions, recs []BatchRecord) ([]byte, error) {
	return AppendBatch(nil, opts, recs)
}

// AppendBatch appends one magic-2 record batch (Kafka's DefaultRecordBatch
// layout, see the package doc) holding recs to dst and returns the extended
// slice. recordCount is len(recs); maxTimestamp is the largest record
// timestamp (or AppendTime under LogAppendTime; -1 for an empty batch); the
// CRC-32C covers attributes to the end. Errors wrap ErrBadBatchInput, or
// come from the codec; dst is returned unchanged (up to its length) on error.
func AppendBatch(dst []byte, opts BatchOptions, recs []BatchRecord) ([]byte, error) {
	if len(recs) == 0 && !opts.KeepOffsetDeltas {
		return dst, fmt.Errorf("%w: a batch needs at least one record", ErrBadBatchInput)
	}
	if opts.Codec < CodecNone || opts.Codec > CodecZstd {
		return dst, fmt.Errorf("%w: unknown codec %d", ErrBadBatchInput, opts.Codec)
	}
	if int64(len(recs)) > math.MaxInt32 {
		return dst, fmt.Errorf("%w: %d records", ErrBadBatchInput, len(recs))
	}

	// Check the input and size the records section in one pass.
	lastDelta := int32(len(recs) - 1)
	if opts.KeepOffsetDeltas {
		lastDelta = opts.LastOffsetDelta
	}
	maxTsDelta := int64(math.MinInt64)
	bodyLen := 0
	prev := int32(-1)
	for i := range recs {
		r := &recs[i]
		od := int32(i)
		if opts.KeepOffsetDeltas {
			od = r.OffsetDelta
			if od <= prev {
				return dst, fmt.Errorf("%w: record %d offset delta %d after %d", ErrBadBatchInput, i, od, prev)
			}
			prev = od
		}
		for j := range r.Headers {
			if r.Headers[j].Key == nil {
				return dst, fmt.Errorf("%w: record %d header %d has a null key", ErrBadBatchInput, i, j)
			}
		}
		n := recordBodySize(r, od)
		bodyLen += uvarintSize(zigzag(int64(n))) + n
		maxTsDelta = max(maxTsDelta, r.TimestampDelta)
	}
	if opts.KeepOffsetDeltas {
		lastDelta = max(lastDelta, prev)
		if lastDelta < 0 {
			lastDelta = 0
		}
	}

	start := len(dst)
	if opts.Codec == CodecNone {
		dst = growCap(dst, HeaderSize+bodyLen) // one allocation for the whole batch
	}
	dst = growBy(dst, HeaderSize)
	b := dst[start:]

	attrs := int16(opts.Codec)
	if opts.LogAppendTime {
		attrs |= AttrTimestampType
	}
	if opts.Transactional {
		attrs |= AttrTransactional
	}
	if opts.Control {
		attrs |= AttrControl
	}
	maxTs := NoTimestamp
	switch {
	case opts.LogAppendTime:
		maxTs = opts.AppendTime
	case len(recs) > 0:
		maxTs = opts.BaseTimestamp + maxTsDelta
	}
	pid, epoch, seq := NoProducerID, int16(-1), NoSequence
	if p := opts.Producer; p != nil {
		pid, epoch, seq = p.ID, p.Epoch, p.BaseSequence
	}
	binary.BigEndian.PutUint64(b[OffBaseOffset:], uint64(opts.BaseOffset))
	binary.BigEndian.PutUint32(b[OffLeaderEpoch:], uint32(opts.PartitionLeaderEpoch))
	b[OffMagic] = 2
	binary.BigEndian.PutUint16(b[OffAttributes:], uint16(attrs))
	binary.BigEndian.PutUint32(b[OffLastOffsetDelta:], uint32(lastDelta))
	binary.BigEndian.PutUint64(b[OffBaseTimestamp:], uint64(opts.BaseTimestamp))
	binary.BigEndian.PutUint64(b[OffMaxTimestamp:], uint64(maxTs))
	binary.BigEndian.PutUint64(b[OffProducerID:], uint64(pid))
	binary.BigEndian.PutUint16(b[OffProducerEpoch:], uint16(epoch))
	binary.BigEndian.PutUint32(b[OffBaseSequence:], uint32(seq))
	binary.BigEndian.PutUint32(b[OffRecordCount:], uint32(len(recs)))

	if opts.Codec == CodecNone {
		dst = appendRecords(growCap(dst, bodyLen), recs, opts.KeepOffsetDeltas)
	} else {
		sp := scratchPool.Get().(*[]byte)
		body := appendRecords(growCap((*sp)[:0], bodyLen), recs, opts.KeepOffsetDeltas)
		var err error
		dst, err = compress.Encode(int8(opts.Codec), dst, body)
		*sp = body[:0]
		if cap(body) <= 8<<20 { // don't let one huge batch pin memory in the pool
			scratchPool.Put(sp)
		}
		if err != nil {
			return dst[:start], fmt.Errorf("record: %s compression: %w", opts.Codec, err)
		}
	}
	b = dst[start:]
	if len(b)-LogOverhead > math.MaxInt32 {
		return dst[:start], fmt.Errorf("%w: batch of %d bytes", ErrBadBatchInput, len(b))
	}
	binary.BigEndian.PutUint32(b[OffBatchLength:], uint32(len(b)-LogOverhead))
	binary.BigEndian.PutUint32(b[OffCRC:], ComputeCRC(b))
	return dst, nil
}

// EndTxnMarker returns the single control record of a transaction marker
// batch (Kafka's ControlRecordType COMMIT=1 / ABORT=0, EndTransactionMarker
// value version 0). Build it with BatchOptions{Control: true,
// Transactional: true, Producer: …}.
func EndTxnMarker(commit bool, coordinatorEpoch int32) BatchRecord {
	key := make([]byte, 4) // version int16 = 0, type int16
	if commit {
		key[3] = 1
	}
	val := make([]byte, 6) // version int16 = 0, coordinatorEpoch int32
	binary.BigEndian.PutUint32(val[2:], uint32(coordinatorEpoch))
	return BatchRecord{Key: key, Value: val}
}

// recordBodySize is the encoded size of a record after its length prefix.
func recordBodySize(r *BatchRecord, offsetDelta int32) int {
	n := 1 // attributes
	n += uvarintSize(zigzag(r.TimestampDelta))
	n += uvarintSize(zigzag(int64(offsetDelta)))
	n += bytesSize(r.Key) + bytesSize(r.Value)
	n += uvarintSize(zigzag(int64(len(r.Headers))))
	for j := range r.Headers {
		n += bytesSize(r.Headers[j].Key) + bytesSize(r.Headers[j].Value)
	}
	return n
}

// appendRecords appends the encoded records (DefaultRecord layout: varint
// length, attributes int8 = 0, varlong timestampDelta, varint offsetDelta,
// varint-prefixed key and value, varint header count, headers).
func appendRecords(dst []byte, recs []BatchRecord, keepDeltas bool) []byte {
	for i := range recs {
		r := &recs[i]
		od := int32(i)
		if keepDeltas {
			od = r.OffsetDelta
		}
		dst = binary.AppendVarint(dst, int64(recordBodySize(r, od)))
		dst = append(dst, 0)
		dst = binary.AppendVarint(dst, r.TimestampDelta)
		dst = binary.AppendVarint(dst, int64(od))
		dst = appendBytes(dst, r.Key)
		dst = appendBytes(dst, r.Value)
		dst = binary.AppendVarint(dst, int64(len(r.Headers)))
		for j := range r.Headers {
			dst = appendBytes(dst, r.Headers[j].Key)
			dst = appendBytes(dst, r.Headers[j].Value)
		}
	}
	return dst
}

func appendBytes(dst, p []byte) []byte {
	if p == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(p)))
	return append(dst, p...)
}

func bytesSize(p []byte) int {
	if p == nil {
		return 1 // zigzag(-1) = 1 fits one byte
	}
	return uvarintSize(zigzag(int64(len(p)))) + len(p)
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func uvarintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// growBy extends dst by n bytes (contents of the new bytes unspecified).
func growBy(dst []byte, n int) []byte {
	dst = growCap(dst, n)
	return dst[:len(dst)+n]
}

// growCap makes room for n more bytes without changing len(dst).
func growCap(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	nd := make([]byte, len(dst), len(dst)+n)
	copy(nd, dst)
	return nd
}
