package storage

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gregor/storage/record"
	"gregor/storage/segment"
)

// appendMarker appends a control batch (ABORT or COMMIT) for producer pid.
func appendMarker(t testing.TB, l *Log, pid int64, commit bool) int64 {
	t.Helper()
	b, err := record.BuildBatch(record.BatchOptions{Control: true, Transactional: true, BaseTimestamp: 1,
		Producer: &record.Producer{ID: pid, Epoch: 0, BaseSequence: -1}}, []record.BatchRecord{record.EndTxnMarker(commit, 3)})
	if err != nil {
		t.Fatal(err)
	}
	info, err := l.Append(b, AppendOptions{LeaderEpoch: 0, LogAppendTime: -1, PreValidated: true})
	if err != nil {
		t.Fatal(err)
	}
	return info.FirstOffset
}

func TestTxnIndexAppendCollectTruncateReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := testConfig()
	cfg.SegmentBytes = 600 // a few batches per segment
	l := openTestLog(t, dir, cfg, OpenOptions{})
	appendN(t, l, 4, 2, 40, 0) // offsets 0..7
	m1 := appendMarker(t, l, 7, false)
	appendN(t, l, 6, 2, 40, 0)
	m2 := appendMarker(t, l, 9, false)
	appendN(t, l, 2, 2, 40, 0)
	if l.NumSegments() < 3 {
		t.Fatalf("want several segments, have %d", l.NumSegments())
	}
	a1 := AbortedTxn{ProducerID: 7, FirstOffset: 2, LastOffset: m1, LastStableOffset: m1 + 1}
	a2 := AbortedTxn{ProducerID: 9, FirstOffset: 10, LastOffset: m2, LastStableOffset: m2 + 1}
	for _, a := range []AbortedTxn{a1, a2, a2} { // the repeat is skipped
		if err := l.AppendAbortedTxn(a); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.AppendAbortedTxn(AbortedTxn{LastOffset: l.LogEndOffset()}); err == nil {
		t.Fatal("an entry past the log end was accepted")
	}
	check := func(from, upper int64, want ...AbortedTxn) {
		t.Helper()
		if got := l.CollectAbortedTxns(from, upper); !slices.Equal(got, want) {
			t.Fatalf("collect [%d,%d): %+v, want %+v", from, upper, got, want)
		}
	}
	check(0, l.LogEndOffset(), a1, a2)
	check(0, 2)           // before the first transaction began
	check(m1+1, 10)       // between them
	check(m1, 11, a1, a2) // both overlap
	check(m2+1, l.LogEndOffset())

	// Kafka's on-disk layout: 34-byte entries in the segment of the marker.
	var files []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if filepath.Ext(e.Name()) == segment.TxnIndexSuffix {
			files = append(files, e.Name())
		}
	}
	if len(files) != 2 {
		t.Fatalf("txnindex files %v, want one per segment holding an abort marker", files)
	}
	data, err := os.ReadFile(filepath.Join(dir, files[0]))
	if err != nil || len(data) != segment.TxnIndexEntrySize {
		t.Fatalf("%s: %d bytes, %v", files[0], len(data), err)
	}
	if v, pid, first, last, lso := binary.BigEndian.Uint16(data), int64(binary.BigEndian.Uint64(data[2:])), int64(binary.BigEndian.Uint64(data[10:])),
		int64(binary.BigEndian.Uint64(data[18:])), int64(binary.BigEndian.Uint64(data[26:])); v != 0 || pid != 7 || first != 2 || last != m1 || lso != m1+1 {
		t.Fatalf("entry %d %d %d %d %d", v, pid, first, last, lso)
	}

	// Reopen (unclean, everything recovered): the entries are loaded back.
	l.Close()
	l = openTestLog(t, dir, cfg, OpenOptions{})
	check(0, l.LogEndOffset(), a1, a2)

	// Truncation below the second marker drops its entry (file kept short).
	if err := l.TruncateTo(m2); err != nil {
		t.Fatal(err)
	}
	check(0, l.LogEndOffset(), a1)
	l.Close()
	l = openTestLog(t, dir, cfg, OpenOptions{CleanShutdown: true})
	defer l.Close()
	check(0, l.LogEndOffset(), a1)

	// Deleting the segment (DeleteRecords + retention) removes its
	// .txnindex; a roll first, as the active segment is never below the
	// log start offset.
	l.mu.Lock()
	_, err = l.rollLocked(l.cfg.Load(), l.LogEndOffset())
	l.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteRecordsBefore(l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.deleteDueLocked(time.Now().Add(time.Hour))
	l.mu.Unlock()
	check(0, l.LogEndOffset())
	ents, _ = os.ReadDir(dir)
	for _, e := range ents {
		if filepath.Ext(e.Name()) == segment.TxnIndexSuffix {
			t.Fatalf("%s left after its segment was deleted", e.Name())
		}
	}
}

func TestTxnIndexTornEntryIsCut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openTestLog(t, dir, testConfig(), OpenOptions{})
	appendN(t, l, 1, 2, 10, 0)
	m := appendMarker(t, l, 4, false)
	a := AbortedTxn{ProducerID: 4, FirstOffset: 0, LastOffset: m, LastStableOffset: m + 1}
	if err := l.AppendAbortedTxn(a); err != nil {
		t.Fatal(err)
	}
	l.Close()
	p := segment.Path(dir, 0, segment.TxnIndexSuffix)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0, 0, 1, 2, 3}) // a torn second entry
	f.Close()
	l = openTestLog(t, dir, testConfig(), OpenOptions{})
	defer l.Close()
	if got := l.CollectAbortedTxns(0, l.LogEndOffset()); !slices.Equal(got, []AbortedTxn{a}) {
		t.Fatalf("after a torn entry: %+v", got)
	}
	if fi, _ := os.Stat(p); fi.Size() != segment.TxnIndexEntrySize {
		t.Fatalf("torn tail kept: %d bytes", fi.Size())
	}
}

func TestScanTxnBatchesDecodesMarkers(t *testing.T) {
	l := newTestLog(t, testConfig())
	appendN(t, l, 1, 2, 10, 0)
	appendMarker(t, l, 5, true)
	appendMarker(t, l, 6, false)
	var got []string
	if err := l.ScanTxnBatches(0, func(h record.Header, m record.EndTxn, ok bool) bool {
		switch {
		case !ok:
			got = append(got, "data")
		case m.Commit():
			got = append(got, "commit")
		default:
			got = append(got, "abort")
		}
		if ok && m.CoordinatorEpoch != 3 {
			t.Errorf("coordinator epoch %d", m.CoordinatorEpoch)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"data", "commit", "abort"}) {
		t.Fatalf("scan %v", got)
	}
}

func TestProducerSnapshotFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openTestLog(t, dir, testConfig(), OpenOptions{})
	defer l.Close()
	appendN(t, l, 6, 1, 10, 0)
	for _, off := range []int64{2, 4, 6} {
		if err := l.WriteProducerSnapshot(off, []byte{byte(off)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.WriteProducerSnapshot(7, nil); err == nil {
		t.Fatal("a snapshot beyond the log end offset was written")
	}
	offs, _ := l.snapshotOffsets()
	if !slices.Equal(offs, []int64{4, 6}) {
		t.Fatalf("snapshots %v, want the newest two", offs)
	}
	if _, err := os.Stat(filepath.Join(dir, "00000000000000000006.snapshot")); err != nil {
		t.Fatalf("Kafka's file name: %v", err)
	}
	// The newest is unusable: deleted, and the one before it is taken.
	var tried []int64
	off, ok, err := l.LatestProducerSnapshot(func(o int64, data []byte) error {
		tried = append(tried, o)
		if o == 6 {
			return errors.New("corrupt")
		}
		if data[0] != byte(o) {
			t.Errorf("snapshot %d holds %v", o, data)
		}
		return nil
	})
	if err != nil || !ok || off != 4 || !slices.Equal(tried, []int64{6, 4}) {
		t.Fatalf("latest: %d %v %v tried %v", off, ok, err, tried)
	}
	// Truncation below a snapshot deletes it.
	if err := l.WriteProducerSnapshot(6, []byte{6}); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(5); err != nil {
		t.Fatal(err)
	}
	if offs, _ := l.snapshotOffsets(); !slices.Equal(offs, []int64{4}) {
		t.Fatalf("after truncation to 5: %v", offs)
	}
	if err := l.TruncateFullyAndStartAt(10); err != nil {
		t.Fatal(err)
	}
	if offs, _ := l.snapshotOffsets(); len(offs) != 0 {
		t.Fatalf("after a full truncation: %v", offs)
	}
}

// TestCleanerStopsAtLastStableOffset: records of an undecided transaction
// (at and above the last stable offset) are never compacted.
func TestCleanerStopsAtLastStableOffset(t *testing.T) {
	l := newTestLog(t, compactConfig())
	fillKeys(t, l, 20, 5, time.Now().UnixMilli())
	l.SetHighWatermark(l.LogEndOffset())
	full := l.CleanableRange(0, time.Now())
	if full.End <= 10 {
		t.Fatalf("range with the high watermark alone: %+v", full)
	}
	l.SetLastStableOffset(10)
	r := l.CleanableRange(0, time.Now())
	if r.End > 10 || r.End >= full.End {
		t.Fatalf("last stable offset 10: range %+v (without it %+v)", r, full)
	}
}
