package dumplog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"gregor/storage/record"
)

// Kafka's index entry sizes: .index maps a 4-byte offset relative to the
// segment's base offset to a 4-byte file position; .timeindex maps an
// 8-byte timestamp to a 4-byte relative offset. Both files are
// preallocated and zero-filled while their segment is active, so the first
// all-zero entry after entry 0 ends the live entries.
const (
	offsetEntrySize = 8
	timeEntrySize   = 12
)

// batchSpan is where one batch sits in the log and what it covers.
type batchSpan struct {
	pos          int64
	base, last   int64
	maxTimestamp int64
}

// scanHeaders lists the batches of a .log file by reading only their
// headers; it stops at the first position that holds no complete batch.
func scanHeaders(seg *segment) []batchSpan {
	var spans []batchSpan
	var hb [record.HeaderSize]byte
	for pos := int64(0); seg.size-pos >= record.HeaderSize; {
		if _, err := seg.f.ReadAt(hb[:], pos); err != nil {
			break
		}
		h, err := record.ParseHeader(hb[:])
		if err != nil || int64(h.Size()) > seg.size-pos {
			break
		}
		spans = append(spans, batchSpan{pos: pos, base: h.BaseOffset, last: h.LastOffset(), maxTimestamp: h.MaxTimestamp})
		pos += int64(h.Size())
	}
	return spans
}

// mismatches collects damage lines printed as one summary per file on
// stderr, like Kafka's "Mismatches in :<file>" block.
type mismatches struct {
	title string
	lines []string
}

func (m *mismatches) add(format string, args ...any) {
	m.lines = append(m.lines, fmt.Sprintf(format, args...))
}

func (m *mismatches) flush(errOut io.Writer) bool {
	if len(m.lines) == 0 {
		return false
	}
	fmt.Fprintln(errOut, m.title)
	for _, l := range m.lines {
		fmt.Fprintln(errOut, "  "+l)
	}
	return true
}

// readIndexFile reads an index file whole (indexes are bounded by
// segment.index.bytes, 10 MiB by default) and checks its entry size.
func readIndexFile(path string, entry int) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b)%entry != 0 {
		return b[:len(b)-len(b)%entry], fmt.Errorf("%d bytes is not a whole number of %d-byte entries", len(b), entry)
	}
	return b, nil
}

// openLogFor opens the .log beside an index, or reports why it cannot.
func openLogFor(out io.Writer, indexPath string, opts Options) *segment {
	seg, err := openSegment(siblingLog(indexPath), opts.MaxMessageSize)
	if err != nil {
		fmt.Fprintf(out, "Cannot verify %s against its log: %v\n", indexPath, err)
		return nil
	}
	return seg
}

// dumpIndex prints an offset index and checks every entry against the log:
// the batch at the entry's position must end at the entry's offset (Kafka
// indexes a batch by its last offset), and offsets and positions must rise.
func dumpIndex(out, errOut io.Writer, path string, opts Options) (bool, error) {
	fmt.Fprintf(out, "Dumping %s\n", path)
	base, err := baseOffsetOf(path)
	if err != nil {
		return true, err
	}
	b, sizeErr := readIndexFile(path, offsetEntrySize)
	if b == nil && sizeErr != nil {
		return true, sizeErr
	}
	mm := &mismatches{title: "Mismatches in :" + path}
	if sizeErr != nil {
		mm.add("Index file damaged: %v", sizeErr)
	}
	seg := openLogFor(out, path, opts)
	if seg != nil {
		defer seg.Close()
	}
	prevOff, prevPos := int64(-1), int64(-1)
	for i := 0; i+offsetEntrySize <= len(b); i += offsetEntrySize {
		rel := int32(binary.BigEndian.Uint32(b[i:]))
		pos := int64(int32(binary.BigEndian.Uint32(b[i+4:])))
		if i > 0 && rel == 0 && pos == 0 {
			break // preallocated tail
		}
		off := base + int64(rel)
		fmt.Fprintf(out, "offset: %d position: %d\n", off, pos)
		if i > 0 && off <= prevOff {
			mm.add("Index offset: %d, previous index offset: %d (offsets go backwards)", off, prevOff)
		}
		if i > 0 && pos <= prevPos {
			mm.add("Index offset: %d, position: %d, previous position: %d (positions go backwards)", off, pos, prevPos)
		}
		prevOff, prevPos = off, pos
		if seg == nil {
			continue
		}
		if pos < 0 {
			mm.add("Index offset: %d, position: %d points nowhere", off, pos)
			continue
		}
		h, _, err := seg.batchAt(pos)
		switch {
		case errors.Is(err, errTorn):
			mm.add("Index offset: %d, position: %d points at no batch (%v)", off, pos, err)
		case err != nil:
			return true, err
		case h.LastOffset() != off:
			mm.add("Index offset: %d, log offset: %d", off, h.LastOffset())
		}
	}
	return mm.flush(errOut), nil
}

// dumpTimeIndex prints a time index and checks each entry: timestamps must
// not go backwards, and the entry's offset must be the last offset of a
// batch whose maxTimestamp is the entry's timestamp.
func dumpTimeIndex(out, errOut io.Writer, path string, opts Options) (bool, error) {
	fmt.Fprintf(out, "Dumping %s\n", path)
	base, err := baseOffsetOf(path)
	if err != nil {
		return true, err
	}
	b, sizeErr := readIndexFile(path, timeEntrySize)
	if b == nil && sizeErr != nil {
		return true, sizeErr
	}
	order := &mismatches{title: "Found out of order timestamp in :" + path}
	tsMM := &mismatches{title: "Found timestamp mismatch in :" + path}
	if sizeErr != nil {
		tsMM.add("Index file damaged: %v", sizeErr)
	}
	var spans []batchSpan
	if seg := openLogFor(out, path, opts); seg != nil {
		spans = scanHeaders(seg)
		seg.Close()
	}
	prevTs := int64(-1)
	for i := 0; i+timeEntrySize <= len(b); i += timeEntrySize {
		ts := int64(binary.BigEndian.Uint64(b[i:]))
		rel := int32(binary.BigEndian.Uint32(b[i+8:]))
		if i > 0 && ts == 0 && rel == 0 {
			break // preallocated tail
		}
		off := base + int64(rel)
		fmt.Fprintf(out, "timestamp: %d offset: %d\n", ts, off)
		if i > 0 && ts < prevTs {
			order.add("Index timestamp: %d, Previously indexed timestamp: %d", ts, prevTs)
		}
		prevTs = ts
		if spans == nil {
			continue
		}
		// The batch holding off: the first whose last offset is >= off.
		k := sort.Search(len(spans), func(j int) bool { return spans[j].last >= off })
		switch {
		case k == len(spans) || spans[k].base > off:
			tsMM.add("Indexed offset: %d, found no batch holding it in the log", off)
		case spans[k].last != off:
			tsMM.add("Indexed offset: %d, found log offset: %d", off, spans[k].last)
		case spans[k].maxTimestamp != ts:
			tsMM.add("Index timestamp: %d, log timestamp: %d", ts, spans[k].maxTimestamp)
		}
	}
	a := order.flush(errOut)
	c := tsMM.flush(errOut)
	return a || c, nil
}
