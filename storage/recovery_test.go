package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"gregor/storage/segment"
)

// crashLog writes count batches then drops the log WITHOUT Close (as a
// crash would: no final flush, no clean shutdown), returning the stored
// batches and the active segment's base.
func crashLog(t *testing.T, dir string, count int) ([][]byte, int64) {
	t.Helper()
	l := openTestLog(t, dir, testConfig(), OpenOptions{})
	bs := appendN(t, l, count, 4, 60, 0)
	act := l.segs.Load().active().BaseOffset()
	l.releaseAll() // close file handles only
	return bs, act
}

func observedLogger() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zap.WarnLevel)
	return zap.New(core), logs
}

func TestRecoveryTruncatesTornTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	bs, act := crashLog(t, dir, 30)
	path := segment.Path(dir, act, segment.LogSuffix)
	size := fileSize(t, path)
	cut := size - int64(len(bs[0]))/2 // middle of the last batch
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	logger, logs := observedLogger()
	l := openTestLog(t, dir, testConfig(), OpenOptions{Logger: logger})
	defer l.Close()
	if l.LogEndOffset() != 116 {
		t.Fatalf("LEO = %d, want 116 (last batch torn)", l.LogEndOffset())
	}
	if got := fileSize(t, path); got != size-int64(len(bs[0])) {
		t.Fatalf("segment size %d, want %d", got, size-int64(len(bs[0])))
	}
	w := logs.FilterMessage("truncated corrupt or torn log tail during recovery").All()
	if len(w) != 1 || w[0].ContextMap()["offset"] != int64(116) || w[0].ContextMap()["bytes"] != cut-(size-int64(len(bs[0]))) || w[0].ContextMap()["partition"] != "t-0" {
		t.Fatalf("warn log: %+v", w)
	}
	// The log keeps working at the new end, and everything below reads back.
	info, err := l.Append(makeBatch(t, batchSpec{n: 1, valueSize: 3}), AppendOptions{LogAppendTime: -1})
	if err != nil || info.FirstOffset != 116 {
		t.Fatalf("append after recovery: %+v %v", info, err)
	}
	fd, _ := l.Read(0, 1<<30, 116)
	var want []byte
	for _, b := range bs[:29] {
		want = append(want, b...)
	}
	if !bytes.Equal(readAll(t, fd), want) {
		t.Fatal("recovered data differs")
	}
}

func TestRecoveryTruncatesAtFlippedByte(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	bs, _ := crashLog(t, dir, 30)
	// Flip a byte inside batch 3 of the first segment: it and everything
	// after it (later segments too) go, since nothing was flushed.
	path := segment.Path(dir, 0, segment.LogSuffix)
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	pos := int64(3*len(bs[0]) + 70)
	var b [1]byte
	f.ReadAt(b[:], pos)
	b[0] ^= 0x20
	f.WriteAt(b[:], pos)
	f.Close()
	logger, logs := observedLogger()
	l := openTestLog(t, dir, testConfig(), OpenOptions{Logger: logger})
	defer l.Close()
	if l.LogEndOffset() != 12 || l.NumSegments() != 1 {
		t.Fatalf("LEO = %d with %d segments, want 12 with 1", l.LogEndOffset(), l.NumSegments())
	}
	if fileSize(t, path) != int64(3*len(bs[0])) {
		t.Fatalf("segment not cut at the corrupt batch")
	}
	if logs.Len() != 1 {
		t.Fatalf("want one WARN, got %d", logs.Len())
	}
}

func TestRecoveryRebuildsDeletedIndexes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openTestLog(t, dir, testConfig(), OpenOptions{})
	appendN(t, l, 30, 4, 60, 5000)
	wantIdx, _ := os.ReadFile(segment.Path(dir, 0, segment.IndexSuffix))
	wantTidx, _ := os.ReadFile(segment.Path(dir, 0, segment.TimeIndexSuffix))
	if len(wantIdx) == 0 || len(wantTidx) == 0 {
		t.Fatal("no index entries to compare")
	}
	l.Close()
	for _, suf := range []string{segment.IndexSuffix, segment.TimeIndexSuffix} {
		os.Remove(segment.Path(dir, 0, suf))
	}
	// Clean shutdown: no recovery scan, but missing indexes are rebuilt.
	l = openTestLog(t, dir, testConfig(), OpenOptions{CleanShutdown: true})
	defer l.Close()
	gotIdx, _ := os.ReadFile(segment.Path(dir, 0, segment.IndexSuffix))
	gotTidx, _ := os.ReadFile(segment.Path(dir, 0, segment.TimeIndexSuffix))
	if !bytes.Equal(gotIdx, wantIdx) || !bytes.Equal(gotTidx, wantTidx) {
		t.Fatalf("rebuilt indexes differ: %d/%d and %d/%d bytes", len(gotIdx), len(wantIdx), len(gotTidx), len(wantTidx))
	}
	if off, _, _, _ := l.OffsetForTimestamp(12_000); off != 28 {
		t.Fatalf("time lookup after rebuild: %d", off)
	}
}

func TestCleanShutdownSkipsRecoveryAndCorruptIndexIsRebuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openTestLog(t, dir, testConfig(), OpenOptions{})
	bs := appendN(t, l, 10, 4, 60, 0)
	l.Close()
	// A flipped byte in a batch is NOT noticed after a clean shutdown (no scan) ...
	path := segment.Path(dir, 0, segment.LogSuffix)
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	f.WriteAt([]byte{0xee}, int64(len(bs[0])+80))
	f.Close()
	l = openTestLog(t, dir, testConfig(), OpenOptions{CleanShutdown: true})
	if l.LogEndOffset() != 40 {
		t.Fatalf("clean open re-validated: LEO = %d, want 40", l.LogEndOffset())
	}
	l.Close()
	// ... while an index pointing past the log is.
	os.WriteFile(segment.Path(dir, 0, segment.IndexSuffix), []byte{0, 0, 0, 1, 0x7f, 0, 0, 0}, 0o644)
	l = openTestLog(t, dir, testConfig(), OpenOptions{CleanShutdown: true})
	defer l.Close()
	// Rebuilding the index re-validates the segment, which finds the flipped byte.
	if l.LogEndOffset() != 4 {
		t.Fatalf("LEO = %d, want 4", l.LogEndOffset())
	}
}

func TestLeftoverFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openTestLog(t, dir, testConfig(), OpenOptions{})
	appendN(t, l, 30, 4, 60, 0)
	segs := l.segs.Load().segs
	second, third := segs[1].BaseOffset(), segs[2].BaseOffset()
	l.Close()
	// A compaction left .cleaned output, retention a .deleted file, and a
	// swap was interrupted: the .swap holds segments 2 and 3's batches.
	os.WriteFile(segment.Path(dir, 999, segment.LogSuffix+segment.CleanedSuffix), []byte("x"), 0o644)
	os.WriteFile(segment.Path(dir, 998, segment.LogSuffix+segment.DeletedSuffix), []byte("x"), 0o644)
	os.WriteFile(segment.Path(dir, 998, segment.IndexSuffix+segment.DeletedSuffix), []byte("x"), 0o644)
	a, _ := os.ReadFile(segment.Path(dir, second, segment.LogSuffix))
	b, _ := os.ReadFile(segment.Path(dir, third, segment.LogSuffix))
	os.WriteFile(segment.Path(dir, second, segment.LogSuffix+segment.SwapSuffix), append(a, b...), 0o644)
	l = openTestLog(t, dir, testConfig(), OpenOptions{CleanShutdown: true})
	defer l.Close()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if _, suf, ok := segment.ParseName(e.Name()); ok && (suf != segment.LogSuffix && suf != segment.IndexSuffix && suf != segment.TimeIndexSuffix) {
			t.Errorf("leftover %s", e.Name())
		}
		if base, _, ok := segment.ParseName(e.Name()); ok && base == third {
			t.Errorf("segment %s replaced by the swap still present", e.Name())
		}
	}
	if l.LogEndOffset() != 120 || l.NumSegments() != len(segs)-1 {
		t.Fatalf("LEO %d segments %d", l.LogEndOffset(), l.NumSegments())
	}
	fd, err := l.Read(0, 1<<30, 120)
	if err != nil || len(splitBatches(t, readAll(t, fd))) != 30 {
		t.Fatalf("read after swap: %v", err)
	}
}
