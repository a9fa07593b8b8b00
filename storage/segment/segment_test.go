package segment

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"gregor/storage/record"
)

func batchAt(t testing.TB, base int64, n int, ts int64) ([]byte, record.Header) {
	t.Helper()
	recs := make([]record.BatchRecord, n)
	for i := range recs {
		recs[i] = record.BatchRecord{Key: []byte{'k'}, Value: bytes.Repeat([]byte{byte(i)}, 100), TimestampDelta: int64(i)}
	}
	b, err := record.BuildBatch(record.BatchOptions{BaseOffset: base, PartitionLeaderEpoch: -1, BaseTimestamp: ts}, recs)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := record.Validate(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, h
}

func TestParseName(t *testing.T) {
	for name, want := range map[string]struct {
		base   int64
		suffix string
		ok     bool
	}{
		"00000000000000000042.log":           {42, ".log", true},
		"00000000000000000042.index.deleted": {42, ".index.deleted", true},
		"00000000000000000000.timeindex":     {0, ".timeindex", true},
		"00000000000000000042.log.swap":      {42, ".log.swap", true},
		"00000000000000000042.snapshot":      {0, "", false},
		"leader-epoch-checkpoint":            {0, "", false},
	} {
		b, s, ok := ParseName(name)
		if b != want.base || s != want.suffix || ok != want.ok {
			t.Errorf("%s: %d %q %v", name, b, s, ok)
		}
	}
	if FileName(42, LogSuffix) != "00000000000000000042.log" {
		t.Fatal(FileName(42, LogSuffix))
	}
}

func TestAppendFindReadTruncate(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, 100, Config{IndexIntervalBytes: 500, MaxIndexBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var positions []int64
	off := int64(100)
	for i := 0; i < 20; i++ {
		b, h := batchAt(t, off, 3, 1000+int64(i)*10)
		positions = append(positions, s.Size())
		if err := s.Append(b, h); err != nil {
			t.Fatal(err)
		}
		off += 3
	}
	if s.NextOffset() != 160 || s.index.Len() == 0 {
		t.Fatalf("next %d, %d index entries", s.NextOffset(), s.index.Len())
	}
	for target := int64(100); target < 160; target++ {
		pos, h, found, err := s.Find(target, s.Size())
		want := (target - 100) / 3
		if err != nil || !found || pos != positions[want] || h.BaseOffset != 100+want*3 {
			t.Fatalf("Find(%d) = %d, %d, %v, %v", target, pos, h.BaseOffset, found, err)
		}
	}
	if _, _, found, _ := s.Find(160, s.Size()); found {
		t.Fatal("found past the end")
	}
	sl, err := s.Read(104, 130, 1<<20, true) // batches [103..105] .. [127..129]
	if err != nil || sl.Pos != positions[1] || sl.Len != positions[10]-positions[1] || !sl.Stopped || sl.FirstOffset != 103 {
		t.Fatalf("Read = %+v, %v", sl, err)
	}
	if ts, off := s.MaxTimestamp(); ts != 1192 || off != 159 {
		t.Fatalf("max ts %d at %d", ts, off)
	}
	if o, err := s.TimeLookupOffset(1100); err != nil || o < 100 || o > 130 {
		t.Fatalf("time lookup %d", o)
	}
	removed, err := s.TruncateTo(131) // inside [130..132]
	if err != nil || removed != s.Size()+removed-positions[10] || s.NextOffset() != 130 || s.Size() != positions[10] {
		t.Fatalf("truncate: removed %d next %d size %d, %v", removed, s.NextOffset(), s.Size(), err)
	}
	if ts, _ := s.MaxTimestamp(); ts != 1092 {
		t.Fatalf("max ts after truncate %d", ts)
	}
}

func TestReopenAndRecover(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{IndexIntervalBytes: 300, MaxIndexBytes: 1 << 10}
	s, _ := Create(dir, 0, cfg)
	for i := int64(0); i < 10; i++ {
		b, h := batchAt(t, i*2, 2, 5000)
		s.Append(b, h)
	}
	size := s.Size()
	s.OnBecomeInactive()
	s.Release()
	s, err := Open(dir, 0, cfg)
	if err != nil || s.NextOffset() != 20 || s.Size() != size {
		t.Fatalf("reopen: next %d size %d, %v", s.NextOffset(), s.Size(), err)
	}
	s.Release()
	os.Truncate(Path(dir, 0, LogSuffix), size-5)
	os.Remove(Path(dir, 0, IndexSuffix))
	s, err = Open(dir, 0, cfg)
	if !errors.Is(err, ErrNeedsRecovery) {
		t.Fatalf("missing index: %v", err)
	}
	defer s.Release()
	res, err := s.Recover(1 << 20)
	if err != nil || res.Batches != 9 || res.TruncatedBytes != size/10-5 || !record.IsCorrupt(res.Cause) || s.NextOffset() != 18 {
		t.Fatalf("recover: %+v next %d, %v", res, s.NextOffset(), err)
	}
}

func TestRefCountKeepsDeletedFileReadable(t *testing.T) {
	dir := t.TempDir()
	s, _ := Create(dir, 0, Config{IndexIntervalBytes: 4096, MaxIndexBytes: 1 << 10})
	b, h := batchAt(t, 0, 2, 1)
	s.Append(b, h)
	if !s.Acquire() {
		t.Fatal("acquire")
	}
	f, err := s.Pin() // the reader's pin keeps the descriptor open
	if err != nil {
		t.Fatal(err)
	}
	s.RenameWithSuffix(DeletedSuffix)
	s.DeleteFiles()
	s.Release() // the owner's reference
	got := make([]byte, len(b))
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, b) {
		t.Fatalf("read after unlink: %v", err)
	}
	s.Unpin()
	if _, err := f.ReadAt(got, 0); err == nil {
		t.Fatal("file still open after the last unpin of a deleted segment")
	}
	if _, err := s.Pin(); !errors.Is(err, ErrSegmentClosed) {
		t.Fatalf("pin after delete: %v, want ErrSegmentClosed", err)
	}
	s.Release()
	if s.Acquire() {
		t.Fatal("acquired a closed segment")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("files left: %v", ents)
	}
}

// Recovering a segment written under a larger segment.index.bytes than
// its config now allows: the index keeps what fits, reads stay correct.
func TestRecoverWithSmallerIndexBound(t *testing.T) {
	dir := t.TempDir()
	big := Config{IndexIntervalBytes: 1, MaxIndexBytes: 1 << 10}
	s, err := Create(dir, 0, big)
	if err != nil {
		t.Fatal(err)
	}
	var pos []int64
	for i := int64(0); i < 40; i++ {
		b, h := batchAt(t, i*2, 2, 5000+i)
		pos = append(pos, s.Size())
		if err := s.Append(b, h); err != nil {
			t.Fatal(err)
		}
	}
	s.OnBecomeInactive()
	s.Release()
	small := Config{IndexIntervalBytes: 1, MaxIndexBytes: 10 * OffsetIndexEntrySize}
	os.Remove(Path(dir, 0, IndexSuffix)) // rebuilt from the .log under the small bound
	s, err = Open(dir, 0, small)
	if !errors.Is(err, ErrNeedsRecovery) {
		t.Fatalf("open without .index: %v", err)
	}
	defer s.Release()
	if _, err := s.Recover(1 << 20); err != nil {
		t.Fatal(err)
	}
	if s.index.Len() != 10 || s.NextOffset() != 80 {
		t.Fatalf("%d index entries, next %d; want 10, 80", s.index.Len(), s.NextOffset())
	}
	for off := int64(0); off < 80; off++ {
		p, h, found, err := s.Find(off, s.Size())
		if err != nil || !found || p != pos[off/2] || h.BaseOffset != off/2*2 {
			t.Fatalf("Find(%d) = %d, %+v, %v, %v", off, p, h.BaseOffset, found, err)
		}
	}
	if fi, _ := os.Stat(Path(dir, 0, IndexSuffix)); fi.Size() != 10*OffsetIndexEntrySize {
		t.Fatalf(".index %d bytes after recovery of a sealed segment, want trimmed to 80", fi.Size())
	}
}
