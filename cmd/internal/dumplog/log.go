package dumplog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"gregor/storage/record"
)

// segment reads record batches from a .log file one at a time, so memory
// stays bounded by the largest batch, not the segment size.
type segment struct {
	f    *os.File
	size int64
	max  int
	buf  []byte
}

func openSegment(path string, maxMessageSize int) (*segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &segment{f: f, size: st.Size(), max: maxMessageSize}, nil
}

func (s *segment) Close() error { return s.f.Close() }

// errTorn means the bytes at a position cannot hold a batch: a truncated
// header, an absurd batchLength, a batch running past the end of file.
var errTorn = errors.New("no complete batch")

// batchAt reads the whole batch starting at pos. It returns errTorn
// (wrapped with the cause) when no complete batch fits there; the returned
// slice is valid until the next call.
func (s *segment) batchAt(pos int64) (record.Header, []byte, error) {
	if s.size-pos < record.HeaderSize {
		return record.Header{}, nil, fmt.Errorf("%w: %d bytes left, a batch header needs %d", errTorn, s.size-pos, record.HeaderSize)
	}
	var hb [record.HeaderSize]byte
	if _, err := s.f.ReadAt(hb[:], pos); err != nil {
		return record.Header{}, nil, err
	}
	h, err := record.ParseHeader(hb[:])
	if err != nil {
		return h, nil, fmt.Errorf("%w: %v", errTorn, err)
	}
	size := h.Size()
	if size > s.max {
		return h, nil, fmt.Errorf("%w: batch size %d exceeds the largest allowable message size (%d)", errTorn, size, s.max)
	}
	if int64(size) > s.size-pos {
		return h, nil, fmt.Errorf("%w: batch of %d bytes at position %d runs past the end of the file (%d bytes)", errTorn, size, pos, s.size)
	}
	if cap(s.buf) < size {
		s.buf = make([]byte, size)
	}
	b := s.buf[:size]
	if _, err := s.f.ReadAt(b, pos); err != nil {
		return h, nil, err
	}
	return h, b, nil
}

func timestampType(h *record.Header) string {
	if h.IsLogAppendTime() {
		return "LogAppendTime"
	}
	return "CreateTime"
}

// dumpLog prints one .log segment. It reports whether anything was invalid.
func dumpLog(out, errOut io.Writer, path string, opts Options) (bool, error) {
	fmt.Fprintf(out, "Dumping %s\n", path)
	base, err := baseOffsetOf(path)
	if err != nil {
		return true, err
	}
	fmt.Fprintf(out, "Log starting offset: %d\n", base)
	seg, err := openSegment(path, opts.MaxMessageSize)
	if err != nil {
		return true, err
	}
	defer seg.Close()

	invalid := false
	var line strings.Builder
	pos := int64(0)
	for pos < seg.size {
		h, b, err := seg.batchAt(pos)
		if errors.Is(err, errTorn) {
			fmt.Fprintf(out, "Found %d invalid bytes at the end of %s (position %d): %v\n", seg.size-pos, path, pos, err)
			return true, nil
		}
		if err != nil {
			return true, err
		}
		// Kafka's isvalid is the integrity check (magic, CRC); the record
		// walk below can still find malformed records in an intact batch.
		_, _, verr := record.ValidateIntegrity(b)
		line.Reset()
		writeBatchLine(&line, &h, pos, b, verr == nil)
		fmt.Fprintln(out, line.String())
		if verr != nil {
			invalid = true
			fmt.Fprintf(out, "| invalid batch at position %d: %v\n", pos, verr)
		} else if opts.DeepIteration {
			if err := dumpRecords(out, &h, b, opts); err != nil {
				invalid = true
				fmt.Fprintf(out, "| invalid records in batch at position %d: %v\n", pos, err)
			}
		}
		pos += int64(len(b))
	}
	return invalid, nil
}

// writeBatchLine formats a batch as DumpLogSegments' printBatchLevel line.
func writeBatchLine(w *strings.Builder, h *record.Header, pos int64, b []byte, valid bool) {
	dh := "OptionalLong.empty"
	if v, ok := h.DeleteHorizonMs(); ok {
		dh = "OptionalLong[" + strconv.FormatInt(v, 10) + "]"
	}
	// crc is the stored checksum, as Kafka prints batch.checksum; isvalid
	// says whether it matches the bytes.
	fmt.Fprintf(w, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t",
		h.BaseOffset, h.LastOffset(), h.RecordCount, h.BaseSequence, h.LastSequence(), h.ProducerID, h.ProducerEpoch,
		h.PartitionLeaderEpoch, h.IsTransactional(), h.IsControl(), dh, pos, timestampType(h), h.MaxTimestamp,
		len(b), h.Magic, h.Codec(), h.CRC, valid)
}

// dumpRecords prints one "| offset: …" line per record (Kafka's
// --deep-iteration / --print-data-log output).
func dumpRecords(out io.Writer, h *record.Header, b []byte, opts Options) error {
	var line strings.Builder
	parse := opts.parser()
	i := int32(0)
	err := record.Records(*h, b, opts.MaxMessageSize, func(r *record.Record) error {
		line.Reset()
		seq := int32(-1)
		if h.BaseSequence >= 0 {
			rh := record.Header{BaseSequence: h.BaseSequence, LastOffsetDelta: r.OffsetDelta}
			seq = rh.LastSequence() // base sequence + offset delta, wrapping as Kafka does
		}
		fmt.Fprintf(&line, "| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [",
			r.Offset(h), timestampType(h), r.Timestamp(h), size(r.Key), size(r.Value), seq)
		for j, hd := range r.Headers {
			if j > 0 {
				line.WriteString(",")
			}
			line.Write(hd.Key)
		}
		line.WriteString("]")
		switch {
		case h.IsControl():
			writeControl(&line, r)
		case parse != nil:
			writeParsed(&line, parse, r, r.Offset(h))
		case opts.PrintDataLog:
			if r.Key != nil {
				line.WriteString(" key: ")
				line.Write(r.Key)
			}
			if r.Value != nil {
				line.WriteString(" payload: ")
				line.Write(r.Value)
			}
		}
		fmt.Fprintln(out, line.String())
		i++
		return nil
	})
	if err != nil {
		return err
	}
	if i != h.RecordCount {
		return fmt.Errorf("header says %d records, batch holds %d", h.RecordCount, i)
	}
	return nil
}

// size is a key or value length as Kafka prints it: -1 for null.
func size(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}
