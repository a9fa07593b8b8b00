package handlers

// Fetch v0-v3: down-conversion to message formats v0/v1, as Kafka's
// KafkaApis.handleFetchRequest (maybeConvertFetchedData) with KIP-283's
// lazy, chunked conversion (LazyDownConversionRecords and its Send):
//
//   - Fetch v0-v1 get magic 0, v2-v3 magic 1 (the log holds magic 2);
//     v4+ always get the stored batches by sendfile, untouched.
//   - message.downconversion.enable=false (topic; broker default
//     log.message.downconversion.enable) → UNSUPPORTED_VERSION for a
//     consumer's partition (followers are not refused); a topic with
//     compression.type=zstd → UNSUPPORTED_COMPRESSION_TYPE below Fetch
//     v10, as Kafka.
//   - The read is as for any fetch (whole batches, the byte limits). The
//     first batch that converts to something is converted when the
//     response is built (a zstd batch there → UNSUPPORTED_COMPRESSION_TYPE
//     for the partition); the records field's length is max(bytes read,
//     first converted batch), so the client always gets one whole batch.
//     The rest is converted batch by batch while the response is written
//     (wire.Stream), never materialised at once: output beyond the
//     declared length is cut (the client drops the partial message), and
//     when the batches run out (or a later batch is zstd) the rest is
//     filled with an "overflow" message header (offset -1, a length past
//     the end) that old clients discard as partial.
//   - Fetch v0-v2 have a hard byte limit (no KIP-74): a first batch larger
//     than the partition's max bytes is sent cut to that limit, a partial
//     message the client reports as too large.

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage"
	"gregor/storage/record"
	"gregor/wire"
)

// downConvertMagic is the message format a Fetch version implies (ok
// false: v4+, record batches as stored).
func downConvertMagic(version int16) (magic int8, ok bool) {
	switch {
	case version <= 1:
		return 0, true
	case version <= 3:
		return 1, true
	}
	return 0, false
}

// fetchFormatError is the partition error Kafka answers before reading
// for a fetch whose version cannot carry the topic's data.
func fetchFormatError(version int16, follower bool, cfg storage.LogConfig) *kerr.Error {
	if cfg.CompressionType == "zstd" && version < 10 {
		return kerr.UnsupportedCompressionType
	}
	if _, ok := downConvertMagic(version); ok && !follower && cfg.DownConversionDisabled {
		return kerr.UnsupportedVersion
	}
	return nil
}

// downConvertAll replaces, for a Fetch v0-v3, every partition's regions
// by a down-converting stream; a partition whose first batch cannot be
// converted answers its error instead (its segments released).
func (s *fetchState) downConvertAll(version int16) map[*fetchPart]wire.Stream {
	magic, ok := downConvertMagic(version)
	if !ok {
		return nil
	}
	streams := map[*fetchPart]wire.Stream{}
	for _, fp := range s.parts {
		if !fp.has {
			continue
		}
		limit := maxUncompressed(storage.DefaultLogConfig().MaxMessageBytes)
		if v := fp.h.View(); v.Log != nil {
			limit = maxUncompressed(v.Log.Config().MaxMessageBytes)
		}
		hard := int64(-1)
		if version <= 2 {
			hard = int64(max(fp.req.PartitionMaxBytes, 0))
		}
		st, err := newDownConvertStream(fp.fd.Regions, fp.fd.Bytes, magic, fp.req.FetchOffset, limit, hard)
		if err != nil {
			fp.fd.Release()
			fp.has = false
			fp.out.ErrorCode = err.Code
			fp.out.HighWatermark, fp.out.LastStableOffset, fp.out.LogStartOffset = -1, -1, -1
			fp.out.RecordBatches = []byte{}
			continue
		}
		if st == nil {
			continue // nothing read
		}
		streams[fp] = st
	}
	return streams
}

// recordBatchOverhead is the smallest length an overflow header claims
// (Kafka's DefaultRecordBatch.RECORD_BATCH_OVERHEAD).
const recordBatchOverhead = record.HeaderSize

// downConvertStream is one partition's records, converted while written.
type downConvertStream struct {
	regions     []storage.Region
	magic       int8
	firstOffset int64
	maxUncomp   int
	size        int64
	first       []byte // the first converted batch
	ri          int    // region of the next batch to convert
	pos         int64  // its file position
	buf         []byte // the batch being converted (reused)
	out         []byte // its conversion (reused)
}

// newDownConvertStream converts the first batch that yields messages and
// sizes the stream (nil for no data). hard >= 0 is Fetch v0-v2's byte
// limit. Errors: UNSUPPORTED_COMPRESSION_TYPE for a zstd first batch,
// KAFKA_STORAGE_ERROR (answered NOT_LEADER_OR_FOLLOWER at these
// versions, as every Fetch v0-v5 error: storageErrorForVersion) when the
// segment cannot be read.
func newDownConvertStream(regions []storage.Region, read int64, magic int8, firstOffset int64, maxUncomp int, hard int64) (*downConvertStream, *kerr.Error) {
	if read <= 0 {
		return nil, nil
	}
	d := &downConvertStream{regions: regions, magic: magic, firstOffset: firstOffset, maxUncomp: maxUncomp}
	if len(regions) > 0 {
		d.pos = regions[0].Pos
	}
	firstRaw := int64(0)
	for {
		raw, ok, err := d.next()
		if err != nil {
			if errors.Is(err, record.ErrDownConvertZstd) {
				return nil, kerr.UnsupportedCompressionType
			}
			return nil, kerr.KafkaStorageError // NOT_LEADER_OR_FOLLOWER at these versions: respond maps it
		}
		if !ok {
			break
		}
		if firstRaw == 0 {
			firstRaw = raw
		}
		if len(d.out) > 0 {
			d.first = append([]byte(nil), d.out...)
			break
		}
	}
	switch {
	case d.first == nil:
		// Data read but nothing convertible (control batches only): an
		// overflow header, so the client moves on by fetching again.
		d.size = record.LogOverhead
	case hard >= 0 && firstRaw > hard:
		d.size = min(hard, int64(len(d.first)))
	default:
		d.size = max(read, int64(len(d.first)))
	}
	return d, nil
}

// next reads and converts the next batch into d.out; ok false when the
// regions are exhausted. raw is the stored batch's size.
func (d *downConvertStream) next() (raw int64, ok bool, err error) {
	for d.ri < len(d.regions) {
		r := d.regions[d.ri]
		end := r.Pos + r.Len
		if d.pos >= end {
			d.ri++
			if d.ri < len(d.regions) {
				d.pos = d.regions[d.ri].Pos
			}
			continue
		}
		var hdr [record.LogOverhead]byte
		if _, err := r.File.ReadAt(hdr[:], d.pos); err != nil {
			return 0, false, fmt.Errorf("reading a batch header at %d: %w", d.pos, err)
		}
		n := int64(record.LogOverhead) + int64(int32(binary.BigEndian.Uint32(hdr[record.OffBatchLength:])))
		if n < record.HeaderSize || d.pos+n > end {
			return 0, false, fmt.Errorf("batch of %d bytes at %d does not fit its region", n, d.pos)
		}
		if int64(cap(d.buf)) < n {
			d.buf = make([]byte, n)
		}
		d.buf = d.buf[:n]
		if _, err := r.File.ReadAt(d.buf, d.pos); err != nil {
			return 0, false, fmt.Errorf("reading a batch at %d: %w", d.pos, err)
		}
		d.pos += n
		d.out, err = record.DownConvert(d.out[:0], d.buf, d.magic, d.firstOffset, d.maxUncomp)
		return n, true, err
	}
	return 0, false, nil
}

// Len implements wire.Stream.
func (d *downConvertStream) Len() int64 { return d.size }

// Emit implements wire.Stream: the first batch, then the rest converted
// one batch at a time, cut at Len, padded with an overflow header.
func (d *downConvertStream) Emit(emit func([]byte) error) error {
	remaining := d.size
	put := func(p []byte) error {
		p = p[:min(int64(len(p)), remaining)]
		remaining -= int64(len(p))
		return emit(p)
	}
	if err := put(d.first); err != nil {
		return err
	}
	d.first = nil
	for remaining > 0 {
		_, ok, err := d.next()
		if errors.Is(err, record.ErrDownConvertZstd) {
			break // committed to the size: overflow; the client refetches here and gets the error
		}
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if err := put(d.out); err != nil {
			return err
		}
	}
	if remaining <= 0 {
		return nil
	}
	var hdr [record.LogOverhead]byte
	binary.BigEndian.PutUint64(hdr[:], ^uint64(0)) // offset -1
	binary.BigEndian.PutUint32(hdr[8:], uint32(max(remaining+1, recordBatchOverhead)))
	if err := put(hdr[:]); err != nil {
		return err
	}
	zeros := make([]byte, min(remaining, 32<<10))
	for remaining > 0 {
		if err := put(zeros); err != nil {
			return err
		}
	}
	return nil
}
