package dumplog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gregor/storage/record"
)

const ts0 = 1700000000000

// fixture is a segment written by hand: three batches (plain idempotent,
// gzip, a commit marker), with its offset and time index.
type fixture struct {
	dir              string
	log, index, tidx string
	batches          [][]byte
	positions        []int64
}

func mustBatch(t *testing.T, opts record.BatchOptions, recs []record.BatchRecord) []byte {
	t.Helper()
	b, err := record.BuildBatch(opts, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir()}
	f.batches = [][]byte{
		mustBatch(t, record.BatchOptions{BaseOffset: 0, BaseTimestamp: ts0, Producer: &record.Producer{ID: 1000, Epoch: 0, BaseSequence: 0}}, []record.BatchRecord{
			{Key: []byte("abc"), Value: []byte("hello"), Headers: []record.RecordHeader{{Key: []byte("h1"), Value: []byte("x")}}},
			{Key: nil, Value: []byte("v2"), TimestampDelta: 1},
			{Key: []byte("k3"), Value: nil, TimestampDelta: 2},
		}),
		mustBatch(t, record.BatchOptions{BaseOffset: 3, BaseTimestamp: ts0 + 10, Codec: record.CodecGzip, PartitionLeaderEpoch: 4}, []record.BatchRecord{
			{Key: []byte("g1"), Value: []byte("zipped-1")},
			{Key: []byte("g2"), Value: []byte("zipped-2"), TimestampDelta: 5},
		}),
		mustBatch(t, record.BatchOptions{BaseOffset: 5, BaseTimestamp: ts0 + 20, Control: true, Transactional: true, Producer: &record.Producer{ID: 7, Epoch: 2, BaseSequence: -1}},
			[]record.BatchRecord{record.EndTxnMarker(true, 3)}),
	}
	var log []byte
	for _, b := range f.batches {
		f.positions = append(f.positions, int64(len(log)))
		log = append(log, b...)
	}
	f.log = filepath.Join(f.dir, "00000000000000000000.log")
	f.index = filepath.Join(f.dir, "00000000000000000000.index")
	f.tidx = filepath.Join(f.dir, "00000000000000000000.timeindex")
	write(t, f.log, log)
	// Index entries (batch last offset → position), then zero-filled
	// preallocation as an active segment has.
	write(t, f.index, append(offsetEntries(2, 0, 4, f.positions[1], 5, f.positions[2]), make([]byte, 64)...))
	write(t, f.tidx, append(timeEntries(ts0+2, 2, ts0+15, 4, ts0+20, 5), make([]byte, 36)...))
	return f
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func offsetEntries(pairs ...int64) []byte {
	var b []byte
	for i := 0; i < len(pairs); i += 2 {
		b = binary.BigEndian.AppendUint32(b, uint32(pairs[i]))
		b = binary.BigEndian.AppendUint32(b, uint32(pairs[i+1]))
	}
	return b
}

func timeEntries(pairs ...int64) []byte {
	var b []byte
	for i := 0; i < len(pairs); i += 2 {
		b = binary.BigEndian.AppendUint64(b, uint64(pairs[i]))
		b = binary.BigEndian.AppendUint32(b, uint32(pairs[i+1]))
	}
	return b
}

func run(t *testing.T, opts Options) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(&out, &errOut, opts)
	return out.String(), errOut.String(), err
}

func crcOf(b []byte) uint32 { h, _ := record.ParseHeader(b); return h.CRC }

func TestDumpLogBatchesAndRecords(t *testing.T) {
	f := newFixture(t)
	out, errOut, err := run(t, Options{Files: []string{f.log}, PrintDataLog: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	want := []string{
		"Dumping " + f.log,
		"Log starting offset: 0",
		fmt.Sprintf("baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: 1000 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: %d size: %d magic: 2 compresscodec: none crc: %d isvalid: true", ts0+2, len(f.batches[0]), crcOf(f.batches[0])),
		fmt.Sprintf("| offset: 0 CreateTime: %d keySize: 3 valueSize: 5 sequence: 0 headerKeys: [h1] key: abc payload: hello", ts0),
		fmt.Sprintf("| offset: 1 CreateTime: %d keySize: -1 valueSize: 2 sequence: 1 headerKeys: [] payload: v2", ts0+1),
		fmt.Sprintf("| offset: 2 CreateTime: %d keySize: 2 valueSize: -1 sequence: 2 headerKeys: [] key: k3", ts0+2),
		fmt.Sprintf("baseOffset: 3 lastOffset: 4 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 4 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: %d CreateTime: %d size: %d magic: 2 compresscodec: gzip crc: %d isvalid: true", f.positions[1], ts0+15, len(f.batches[1]), crcOf(f.batches[1])),
		fmt.Sprintf("| offset: 3 CreateTime: %d keySize: 2 valueSize: 8 sequence: -1 headerKeys: [] key: g1 payload: zipped-1", ts0+10),
		fmt.Sprintf("| offset: 4 CreateTime: %d keySize: 2 valueSize: 8 sequence: -1 headerKeys: [] key: g2 payload: zipped-2", ts0+15),
		fmt.Sprintf("baseOffset: 5 lastOffset: 5 count: 1 baseSequence: -1 lastSequence: -1 producerId: 7 producerEpoch: 2 partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: %d CreateTime: %d size: %d magic: 2 compresscodec: none crc: %d isvalid: true", f.positions[2], ts0+20, len(f.batches[2]), crcOf(f.batches[2])),
		fmt.Sprintf("| offset: 5 CreateTime: %d keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 3", ts0+20),
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("output:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	// Without --print-data-log or --deep-iteration only batch lines.
	out, _, _ = run(t, Options{Files: []string{f.log}})
	if strings.Contains(out, "| offset") || strings.Count(out, "baseOffset:") != 3 {
		t.Fatalf("batch-only output:\n%s", out)
	}
	// --deep-iteration prints records without their content.
	out, _, _ = run(t, Options{Files: []string{f.log}, DeepIteration: true})
	if strings.Count(out, "| offset") != 6 || strings.Contains(out, "payload:") {
		t.Fatalf("deep-iteration output:\n%s", out)
	}
}

func TestDumpLogDamageContinues(t *testing.T) {
	f := newFixture(t)
	log, _ := os.ReadFile(f.log)
	log[f.positions[1]+record.HeaderSize+3] ^= 0xff // inside the gzip payload: CRC mismatch
	log = append(log, 1, 2, 3, 4, 5, 6, 7)          // torn tail
	write(t, f.log, log)
	out, _, err := run(t, Options{Files: []string{f.log}, PrintDataLog: true})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err %v, want ErrInvalid", err)
	}
	for _, want := range []string{
		"baseOffset: 3 lastOffset: 4 count: 2",
		"isvalid: false",
		"| invalid batch at position " + fmt.Sprint(f.positions[1]) + ": corrupt record batch: crc mismatch",
		"baseOffset: 5 lastOffset: 5", // the dump went on past the bad batch
		"endTxnMarker: COMMIT",
		"Found 7 invalid bytes at the end of " + f.log,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "payload: zipped") {
		t.Error("records of a corrupt batch were printed")
	}
}

func TestDumpLogOversizedBatch(t *testing.T) {
	f := newFixture(t)
	out, _, err := run(t, Options{Files: []string{f.log}, MaxMessageSize: len(f.batches[0]) - 1})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(out, "exceeds the largest allowable message size") {
		t.Fatalf("err %v\n%s", err, out)
	}
}

func TestDumpIndexes(t *testing.T) {
	f := newFixture(t)
	out, errOut, err := run(t, Options{Files: []string{f.index, f.tidx}})
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	want := fmt.Sprintf("Dumping %s\noffset: 2 position: 0\noffset: 4 position: %d\noffset: 5 position: %d\n"+
		"Dumping %s\ntimestamp: %d offset: 2\ntimestamp: %d offset: 4\ntimestamp: %d offset: 5\n",
		f.index, f.positions[1], f.positions[2], f.tidx, ts0+2, ts0+15, ts0+20)
	if out != want || errOut != "" {
		t.Fatalf("output:\n%s\nwant:\n%s\nstderr:\n%s", out, want, errOut)
	}
}

func TestDumpIndexMismatches(t *testing.T) {
	f := newFixture(t)
	// offset 1 is not a batch's last offset; 9999 points past the log; the
	// last entry goes backwards.
	write(t, f.index, offsetEntries(1, 0, 4, 9999, 3, f.positions[1]))
	write(t, f.tidx, timeEntries(ts0+2, 2, ts0+1, 4, ts0+20, 9))
	out, errOut, err := run(t, Options{Files: []string{f.index, f.tidx}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(out, "offset: 4 position: 9999") {
		t.Errorf("entries not all printed:\n%s", out)
	}
	for _, want := range []string{
		"Mismatches in :" + f.index,
		"  Index offset: 1, log offset: 2",
		"  Index offset: 4, position: 9999 points at no batch",
		"  Index offset: 3, previous index offset: 4 (offsets go backwards)",
		"Found out of order timestamp in :" + f.tidx,
		fmt.Sprintf("  Index timestamp: %d, Previously indexed timestamp: %d", ts0+1, ts0+2),
		"Found timestamp mismatch in :" + f.tidx,
		fmt.Sprintf("  Index timestamp: %d, log timestamp: %d", ts0+1, ts0+15),
		"  Indexed offset: 9, found no batch holding it in the log",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestRunErrors(t *testing.T) {
	if _, _, err := run(t, Options{}); err == nil {
		t.Error("no files accepted")
	}
	_, errOut, err := run(t, Options{Files: []string{filepath.Join(t.TempDir(), "00000000000000000000.log")}})
	if err == nil || !strings.Contains(errOut, "Error dumping") {
		t.Errorf("missing file: %v %q", err, errOut)
	}
	bad := filepath.Join(t.TempDir(), "segment.log")
	write(t, bad, nil)
	if _, _, err := run(t, Options{Files: []string{bad}}); err == nil {
		t.Error("badly named segment accepted")
	}
}
