package record

import (
	"encoding/binary"
	"fmt"

	"gregor/storage/compress"
)

// Recompress rewrites a magic-2 batch with another codec, as the broker does
// when a topic's compression.type differs from the producer's codec (or
// when LogAppendTime forces a rebuild). Everything but the codec is kept:
// base offset, partition leader epoch, base and max timestamps, the
// timestamp type, transactional/control/delete-horizon bits, producer id,
// epoch and base sequence, every record's offset and timestamp deltas, keys
// (nil vs empty), values and headers. The input is decompressed to at most
// maxUncompressed bytes.
//
// The input must already have passed ValidateIntegrity. Errors: the
// *CorruptError / *InvalidError of Records for a damaged input, or
// ErrBadBatchInput for an unknown target codec. The result is a new slice
// with a fresh CRC.
func Recompress(batch []byte, codec Codec, maxUncompressed int) ([]byte, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return nil, err
	}
	if len(batch) < h.Size() {
		return nil, errTruncated(len(batch), h.Size())
	}
	batch = batch[:h.Size()]
	// Decompress into a buffer owned by this call: the records handed to
	// AppendBatch alias it, so it must outlive the Records walk.
	body := batch[HeaderSize:]
	if c := h.Codec(); c != CodecNone {
		body, err = compress.AppendDecode(int8(c), nil, body, maxUncompressed)
		if err != nil {
			return nil, &CorruptError{Reason: fmt.Sprintf("%s decompression: %v", c, err), Field: "attributes", Value: int64(h.Attributes), Err: err}
		}
	}
	recs := make([]BatchRecord, 0, max(0, min(int(h.RecordCount), len(body))))
	var r Record
	for i := 0; len(body) > 0; i++ {
		if int32(i) >= h.RecordCount {
			return nil, &InvalidError{Reason: fmt.Sprintf("trailing bytes after %d records", h.RecordCount), RecordIndex: i}
		}
		r.Headers = nil // each record keeps its own header slice
		n, err := decodeRecord(body, &r)
		if err != nil {
			return nil, &InvalidError{Reason: err.Error(), RecordIndex: i}
		}
		body = body[n:]
		recs = append(recs, BatchRecord{Key: r.Key, Value: r.Value, Headers: r.Headers, TimestampDelta: r.TimestampDelta, OffsetDelta: r.OffsetDelta})
	}
	if int32(len(recs)) != h.RecordCount {
		return nil, &InvalidError{Reason: fmt.Sprintf("header says %d records, batch holds %d", h.RecordCount, len(recs)), RecordIndex: -1}
	}
	opts := BatchOptions{
		BaseOffset:           h.BaseOffset,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		BaseTimestamp:        h.BaseTimestamp,
		LogAppendTime:        h.IsLogAppendTime(),
		AppendTime:           h.MaxTimestamp,
		Codec:                codec,
		Transactional:        h.IsTransactional(),
		Control:              h.IsControl(),
		KeepOffsetDeltas:     true,
		LastOffsetDelta:      h.LastOffsetDelta,
	}
	if h.ProducerID != NoProducerID || h.ProducerEpoch != -1 || h.BaseSequence != NoSequence {
		opts.Producer = &Producer{ID: h.ProducerID, Epoch: h.ProducerEpoch, BaseSequence: h.BaseSequence}
	}
	out, err := BuildBatch(opts, recs)
	if err != nil {
		return nil, err
	}
	if h.Attributes&AttrDeleteHorizonSet != 0 {
		attrs := binary.BigEndian.Uint16(out[OffAttributes:]) | AttrDeleteHorizonSet
		binary.BigEndian.PutUint16(out[OffAttributes:], attrs)
	}
	// maxTimestamp is copied, not recomputed: it is what the log indexed.
	binary.BigEndian.PutUint64(out[OffMaxTimestamp:], uint64(h.MaxTimestamp))
	binary.BigEndian.PutUint32(out[OffCRC:], ComputeCRC(out))
	return out, nil
}
