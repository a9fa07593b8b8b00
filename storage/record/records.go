package record

import (
	"encoding/binary"
	"fmt"
	"sync"

	"gregor/storage/compress"
)

// RecordHeader is a record header (KIP-82): a string key and a nullable value.
type RecordHeader struct {
	Key   []byte
	Value []byte // nil for a null value
}

// Record is one record of a batch, decoded in place: Key, Value and header
// slices alias the batch (or its decompressed copy) and are valid only
// inside the callback that received them.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte // nil = null key; empty non-nil = empty key
	Value          []byte // nil = null value (tombstone)
	Headers        []RecordHeader
}

// Offset is the record's absolute offset given its batch header.
func (r *Record) Offset(h *Header) int64 { return h.BaseOffset + int64(r.OffsetDelta) }

// Timestamp is the record's timestamp in ms, honouring LogAppendTime batches.
func (r *Record) Timestamp(h *Header) int64 {
	if h.IsLogAppendTime() {
		return h.MaxTimestamp
	}
	return h.BaseTimestamp + r.TimestampDelta
}

// Records decodes every record of a batch (decompressing it first when its
// codec is not none, to at most maxUncompressed bytes) and calls fn for each.
// It stops at fn's first error and returns it. Malformed records give an
// *InvalidError; a failed or oversized decompression a *CorruptError.
func Records(h Header, batch []byte, maxUncompressed int, fn func(*Record) error) error {
	// Records alias the decompressed bytes only during fn, so the buffer
	// goes back to a pool afterwards.
	body, buf, err := recordsSection(h, batch, maxUncompressed)
	defer releaseDecodeBuf(buf)
	if err != nil {
		return err
	}
	var r Record
	for i := 0; len(body) > 0; i++ {
		n, err := nextRecord(h.RecordCount, body, i, &r)
		if err != nil {
			return err
		}
		body = body[n:]
		if err := fn(&r); err != nil {
			return err
		}
	}
	return nil
}

// decodePool holds decompression buffers for Records; buffers that grew
// beyond maxPooledDecode are left to the GC so one huge batch does not pin
// memory.
var decodePool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooledDecode = 8 << 20

// recordsSection returns the records section of batch, decompressed (to at
// most maxUncompressed bytes) into a buffer from decodePool when the codec
// is not none. buf is that buffer (nil for an uncompressed batch): the
// records alias it until the caller hands it to releaseDecodeBuf, which it
// must do even on error. Errors: a truncated batch or a failed or oversized
// decompression, as *CorruptError.
func recordsSection(h Header, batch []byte, maxUncompressed int) (body []byte, buf *[]byte, err error) {
	if len(batch) < HeaderSize {
		return nil, nil, errTruncated(len(batch), HeaderSize)
	}
	body = batch[HeaderSize:]
	c := h.Codec()
	if c == CodecNone {
		return body, nil, nil
	}
	buf = decodePool.Get().(*[]byte)
	dec, err := compress.AppendDecode(int8(c), (*buf)[:0], body, maxUncompressed)
	*buf = dec[:0]
	if err != nil {
		return nil, buf, &CorruptError{Reason: fmt.Sprintf("%s decompression: %v", c, err), Field: "attributes", Value: int64(h.Attributes), Err: err}
	}
	return dec, buf, nil
}

// releaseDecodeBuf returns a recordsSection buffer to decodePool unless it
// grew beyond maxPooledDecode; nil is a no-op.
func releaseDecodeBuf(buf *[]byte) {
	if buf != nil && cap(*buf) <= maxPooledDecode {
		decodePool.Put(buf)
	}
}

// nextRecord decodes record i of a batch whose header counts recordCount
// records from body into r and returns the bytes it took. Bytes beyond the
// counted records, or a malformed record, are an *InvalidError naming
// record i.
func nextRecord(recordCount int32, body []byte, i int, r *Record) (int, error) {
	if int32(i) >= recordCount {
		return 0, &InvalidError{Reason: fmt.Sprintf("trailing bytes after %d records", recordCount), RecordIndex: i}
	}
	n, err := decodeRecord(body, r)
	if err != nil {
		return 0, &InvalidError{Reason: err.Error(), RecordIndex: i}
	}
	return n, nil
}

// decodeRecord decodes one length-prefixed record from b into r (reusing
// r.Headers' backing array) and returns the bytes consumed.
func decodeRecord(b []byte, r *Record) (int, error) {
	length, n := binary.Varint(b)
	if n <= 0 || length < 0 {
		return 0, fmt.Errorf("bad record length")
	}
	if int64(len(b)-n) < length {
		return 0, fmt.Errorf("record length %d overruns the batch", length)
	}
	total := n + int(length)
	p := b[n:total]
	if len(p) < 1 {
		return 0, fmt.Errorf("empty record")
	}
	r.Attributes = int8(p[0])
	p = p[1:]
	var ok bool
	if r.TimestampDelta, p, ok = varlong(p); !ok {
		return 0, fmt.Errorf("bad timestamp delta")
	}
	var od int64
	if od, p, ok = varlong(p); !ok || od > int64(^uint32(0)>>1) || od < 0 {
		return 0, fmt.Errorf("bad offset delta")
	}
	r.OffsetDelta = int32(od)
	if r.Key, p, ok = varbytes(p); !ok {
		return 0, fmt.Errorf("bad key")
	}
	if r.Value, p, ok = varbytes(p); !ok {
		return 0, fmt.Errorf("bad value")
	}
	var nh int64
	if nh, p, ok = varlong(p); !ok || nh < 0 || nh > int64(len(p)) {
		return 0, fmt.Errorf("bad header count")
	}
	r.Headers = r.Headers[:0]
	for j := int64(0); j < nh; j++ {
		var hk, hv []byte
		if hk, p, ok = varbytes(p); !ok || hk == nil {
			return 0, fmt.Errorf("bad header key")
		}
		if hv, p, ok = varbytes(p); !ok {
			return 0, fmt.Errorf("bad header value")
		}
		r.Headers = append(r.Headers, RecordHeader{Key: hk, Value: hv})
	}
	if len(p) != 0 {
		return 0, fmt.Errorf("%d stray bytes inside record", len(p))
	}
	return total, nil
}

func varlong(b []byte) (int64, []byte, bool) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, b, false
	}
	return v, b[n:], true
}

// varbytes reads a zigzag-varint length then that many bytes; length -1 is null.
func varbytes(b []byte) ([]byte, []byte, bool) {
	l, rest, ok := varlong(b)
	if !ok || l < -1 || l > int64(len(rest)) {
		return nil, b, false
	}
	if l == -1 {
		return nil, rest, true
	}
	return rest[:l:l], rest[l:], true
}
