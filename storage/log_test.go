package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gregor/storage/record"
	"gregor/storage/segment"
)

func TestAppendAssignsOffsetsAndReadsBack(t *testing.T) {
	l := newTestLog(t, testConfig())
	batches := appendN(t, l, 40, 5, 50, 1_000_000) // ~40 * 400 B: several 4 KiB segments
	if got := l.LogEndOffset(); got != 200 {
		t.Fatalf("LEO = %d, want 200", got)
	}
	if l.NumSegments() < 3 {
		t.Fatalf("segments = %d, want a few rolls", l.NumSegments())
	}
	// Every offset reads back from the batch containing it, bytes identical
	// to what Append stored (base offset rewritten in place).
	for off := int64(0); off < 200; off += 7 {
		fd, err := l.Read(off, 1<<20, 200)
		if err != nil {
			t.Fatal(err)
		}
		if fd.FirstOffset != off/5*5 {
			t.Fatalf("read %d: first offset %d, want %d", off, fd.FirstOffset, off/5*5)
		}
		got := readAll(t, fd)
		var want []byte
		for _, b := range batches[off/5:] {
			want = append(want, b...)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("read %d: %d bytes differ from the %d appended", off, len(got), len(want))
		}
		hs := splitBatches(t, got)
		for i, h := range hs {
			if h.BaseOffset != (off/5+int64(i))*5 || h.PartitionLeaderEpoch != 0 {
				t.Fatalf("batch %d: base %d epoch %d", i, h.BaseOffset, h.PartitionLeaderEpoch)
			}
		}
	}
}

func TestReadBounds(t *testing.T) {
	l := newTestLog(t, testConfig())
	batches := appendN(t, l, 10, 4, 100, 0)
	size := int64(len(batches[0]))
	// upperBound (high watermark) 10 excludes the batch [8,11] and later.
	fd, err := l.Read(0, 1<<20, 10)
	if err != nil {
		t.Fatal(err)
	}
	if hs := splitBatches(t, readAll(t, fd)); len(hs) != 2 || hs[1].LastOffset() != 7 {
		t.Fatalf("upperBound 10: %d batches", len(hs))
	}
	// maxBytes smaller than a batch: exactly one batch (KIP-74).
	fd, _ = l.Read(5, 10, 40)
	if fd.Bytes != size || fd.FirstOffset != 4 {
		t.Fatalf("KIP-74: %d bytes from %d, want %d from 4", fd.Bytes, fd.FirstOffset, size)
	}
	fd.Release()
	// maxBytes of 2.5 batches: two whole batches.
	fd, _ = l.Read(0, size*5/2, 40)
	if fd.Bytes != 2*size {
		t.Fatalf("maxBytes: %d bytes, want %d", fd.Bytes, 2*size)
	}
	fd.Release()
	// offset == LEO and offset == upperBound are empty, not errors.
	for _, c := range [][2]int64{{40, 40}, {8, 8}} {
		fd, err := l.Read(c[0], 1<<20, c[1])
		if err != nil || fd.Bytes != 0 || fd.FirstOffset != -1 {
			t.Fatalf("Read(%d, ub %d) = %d bytes, %v", c[0], c[1], fd.Bytes, err)
		}
	}
	if _, err := l.Read(41, 1<<20, 41); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("past LEO: %v", err)
	}
	if err := l.DeleteRecordsBefore(9); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(8, 1<<20, 40); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("below log start: %v", err)
	}
	fd, err = l.Read(9, 1<<20, 40)
	if err != nil || fd.FirstOffset != 8 {
		t.Fatalf("at log start: first %d, %v", fd.FirstOffset, err)
	}
	fd.Release()
}

func TestAppendRejectsBadBatchesWritingNothing(t *testing.T) {
	cfg := testConfig()
	cfg.MaxMessageBytes = 2000
	l := newTestLog(t, cfg)
	appendN(t, l, 1, 3, 10, 0)
	before := l.Size()
	seg := segment.Path(l.Dir(), 0, segment.LogSuffix)

	bad := makeBatch(t, batchSpec{n: 3, valueSize: 10})
	bad[len(bad)-1] ^= 0xff // inside the last record: CRC mismatch
	var ce *record.CorruptError
	if _, err := l.Append(bad, AppendOptions{LeaderEpoch: 0, LogAppendTime: -1}); !errors.As(err, &ce) {
		t.Fatalf("flipped byte: %v, want *record.CorruptError", err)
	}
	big := makeBatch(t, batchSpec{n: 3, valueSize: 1000})
	if _, err := l.Append(big, AppendOptions{LogAppendTime: -1}); !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	trailing := append(makeBatch(t, batchSpec{n: 1, valueSize: 1}), 0, 0)
	var ie *record.InvalidError
	if _, err := l.Append(trailing, AppendOptions{LogAppendTime: -1}); !errors.As(err, &ie) {
		t.Fatalf("trailing bytes: %v", err)
	}
	cfg.Compact = true
	l.SetConfig(cfg)
	if _, err := l.Append(makeBatch(t, batchSpec{n: 2, valueSize: 5, nilKeys: true}), AppendOptions{LogAppendTime: -1}); !errors.As(err, &ie) {
		t.Fatalf("compacted without key: %v", err)
	}
	if l.LogEndOffset() != 3 || l.Size() != before || fileSize(t, seg) != before {
		t.Fatalf("rejected batches changed the log: LEO %d size %d file %d (was %d)", l.LogEndOffset(), l.Size(), fileSize(t, seg), before)
	}
}

func TestAppendLogAppendTimeAndEpochCache(t *testing.T) {
	l := newTestLog(t, testConfig())
	b := makeBatch(t, batchSpec{n: 3, valueSize: 10, baseTs: 100})
	info, err := l.Append(b, AppendOptions{LeaderEpoch: 5, LogAppendTime: 99_000})
	if err != nil {
		t.Fatal(err)
	}
	if info.LogAppendTime != 99_000 || info.MaxTimestamp != 99_000 || info.FirstOffset != 0 || info.LastOffset != 2 {
		t.Fatalf("info = %+v", info)
	}
	fd, _ := l.Read(0, 1<<20, 3)
	hs := splitBatches(t, readAll(t, fd)) // CRC still valid after stamping
	if !hs[0].IsLogAppendTime() || hs[0].MaxTimestamp != 99_000 || hs[0].PartitionLeaderEpoch != 5 {
		t.Fatalf("stored header %+v", hs[0])
	}
	appendN(t, l, 1, 2, 10, 0) // epoch 0 < 5: Kafka truncates the cache to keep it monotonic
	l.Append(makeBatch(t, batchSpec{n: 1, valueSize: 1}), AppendOptions{LeaderEpoch: 7, LogAppendTime: -1})
	if e, ok := l.LeaderEpochs().Latest(); !ok || e != 7 {
		t.Fatalf("latest epoch %d %v", e, ok)
	}
}

func TestRollRules(t *testing.T) {
	t.Run("segment.bytes", func(t *testing.T) {
		cfg := testConfig()
		cfg.SegmentBytes = 1000
		l := newTestLog(t, cfg)
		bs := appendN(t, l, 10, 1, 300, 0) // ~380 B each: 2 per segment
		per := 1000 / len(bs[0])
		if got, want := l.NumSegments(), (10+per-1)/per; got != want {
			t.Fatalf("segments = %d, want %d", got, want)
		}
	})
	t.Run("segment.ms by timestamps", func(t *testing.T) {
		cfg := testConfig()
		cfg.SegmentMs = 5000
		l := newTestLog(t, cfg)
		appendN(t, l, 12, 1, 10, 1_000_000) // 1 s apart: roll when > 5 s after the first batch
		if got := l.NumSegments(); got != 2 {
			t.Fatalf("segments = %d, want 2", got)
		}
		if base := l.segs.Load().segs[1].BaseOffset(); base != 6 {
			t.Fatalf("second segment base %d, want 6", base)
		}
	})
	t.Run("segment.index.bytes", func(t *testing.T) {
		cfg := testConfig()
		cfg.SegmentBytes = 1 << 20
		cfg.IndexIntervalBytes = 1
		cfg.SegmentIndexBytes = 4 * segment.TimeIndexEntrySize // 4 time index entries, 6 offset index entries
		l := newTestLog(t, cfg)
		// Entries for every batch after the first. The time index is full
		// at 3 entries, after 4 batches: as Kafka's TimeIndex.isFull it keeps
		// its last slot for the final entry written at roll.
		appendN(t, l, 11, 1, 10, 0)
		if got := l.NumSegments(); got != 3 {
			t.Fatalf("segments = %d, want 3", got)
		}
		if fi := fileSize(t, segment.Path(l.Dir(), 0, segment.IndexSuffix)); fi != 3*segment.OffsetIndexEntrySize {
			t.Fatalf("index size %d", fi)
		}
	})
}

func TestTruncateTo(t *testing.T) {
	l := newTestLog(t, testConfig())
	appendN(t, l, 30, 4, 60, 0) // offsets 0..119, several segments
	l.LeaderEpochs().Assign(3, 60)
	l.LeaderEpochs().Assign(4, 100)
	if err := l.TruncateTo(70); err != nil { // inside batch [68,71]
		t.Fatal(err)
	}
	if l.LogEndOffset() != 68 {
		t.Fatalf("LEO = %d, want 68", l.LogEndOffset())
	}
	if e, _ := l.LeaderEpochs().Latest(); e != 3 {
		t.Fatalf("latest epoch %d, want 3", e)
	}
	fd, err := l.Read(60, 1<<20, 1000)
	if err != nil {
		t.Fatal(err)
	}
	hs := splitBatches(t, readAll(t, fd))
	if hs[len(hs)-1].LastOffset() != 67 {
		t.Fatalf("last batch ends at %d", hs[len(hs)-1].LastOffset())
	}
	// Appends continue at the new end.
	info, err := l.Append(makeBatch(t, batchSpec{n: 2, valueSize: 5}), AppendOptions{LeaderEpoch: 5, LogAppendTime: -1})
	if err != nil || info.FirstOffset != 68 {
		t.Fatalf("append after truncate: %+v %v", info, err)
	}
	// Truncation to a segment base drops that segment.
	base := l.segs.Load().segs[1].BaseOffset()
	n := l.NumSegments()
	if err := l.TruncateTo(base); err != nil {
		t.Fatal(err)
	}
	if l.NumSegments() != 1 || l.LogEndOffset() != base || n < 2 {
		t.Fatalf("segments %d LEO %d, want 1 and %d", l.NumSegments(), l.LogEndOffset(), base)
	}
	if err := l.TruncateFullyAndStartAt(500); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 500 || l.LogEndOffset() != 500 || l.NumSegments() != 1 {
		t.Fatalf("after full truncation: start %d end %d", l.LogStartOffset(), l.LogEndOffset())
	}
	if _, ok := l.LeaderEpochs().Latest(); ok {
		t.Fatal("epoch cache not cleared")
	}
	ents, _ := os.ReadDir(l.Dir())
	for _, e := range ents {
		if b, _, ok := segment.ParseName(e.Name()); ok && b != 500 {
			t.Fatalf("leftover segment file %s", e.Name())
		}
	}
}

func TestAppendAsFollower(t *testing.T) {
	l := newTestLog(t, testConfig())
	var wire []byte
	for i, base := range []int64{0, 3, 10} { // a gap 5..9, as after compaction
		b := makeBatch(t, batchSpec{n: map[int]int{0: 3, 1: 2, 2: 4}[i], valueSize: 20, baseTs: 1000})
		record.SetBaseOffset(b, base)
		record.SetPartitionLeaderEpoch(b, int32(i+1))
		wire = append(wire, b...)
	}
	info, err := l.AppendAsFollower(wire)
	if err != nil {
		t.Fatal(err)
	}
	if info.FirstOffset != 0 || info.LastOffset != 13 || info.RecordCount != 9 || l.LogEndOffset() != 14 {
		t.Fatalf("info %+v LEO %d", info, l.LogEndOffset())
	}
	if e, off := l.LeaderEpochs().EndOffsetForEpoch(2); e != 2 || off != 10 {
		t.Fatalf("EndOffsetForEpoch(2) = %d, %d; want 2, 10", e, off)
	}
	if _, err := l.AppendAsFollower(wire[:len(wire)/3]); !errors.Is(err, ErrUnexpectedAppendOffset) {
		t.Fatalf("stale batch: %v", err)
	}
	bad := append([]byte(nil), wire...)
	bad[len(bad)-2] ^= 1
	l2 := newTestLog(t, testConfig())
	if _, err := l2.AppendAsFollower(bad); !record.IsCorrupt(err) || l2.LogEndOffset() != 0 || l2.Size() != 0 {
		t.Fatalf("corrupt follower batch: %v, LEO %d", err, l2.LogEndOffset())
	}
}

func TestOffsetForTimestamp(t *testing.T) {
	l := newTestLog(t, testConfig())
	appendN(t, l, 30, 4, 60, 10_000) // batch i: ts 10000+1000i .. +3, offsets 4i..4i+3
	cases := []struct {
		ts, off, gotTs int64
		found          bool
	}{
		{0, 0, 10_000, true},
		{10_002, 2, 10_002, true},
		{10_004, 4, 11_000, true},
		{25_001, 61, 25_001, true},
		{39_003, 119, 39_003, true},
		{39_004, -1, -1, false},
	}
	for _, c := range cases {
		off, ts, found, err := l.OffsetForTimestamp(c.ts)
		if err != nil || off != c.off || ts != c.gotTs || found != c.found {
			t.Errorf("OffsetForTimestamp(%d) = %d, %d, %v, %v; want %d, %d, %v", c.ts, off, ts, found, err, c.off, c.gotTs, c.found)
		}
	}
	// Largest timestamp in an early batch wins over later smaller ones.
	l.Append(makeBatch(t, batchSpec{n: 3, valueSize: 5, baseTs: 90_000}), AppendOptions{LogAppendTime: -1})
	l.Append(makeBatch(t, batchSpec{n: 3, valueSize: 5, baseTs: 5}), AppendOptions{LogAppendTime: -1})
	if off, ts := l.OffsetOfMaxTimestamp(); off != 122 || ts != 90_002 {
		t.Fatalf("OffsetOfMaxTimestamp = %d, %d; want 122, 90002", off, ts)
	}
	if off, _, _, _ := l.OffsetForTimestamp(50_000); off != 120 {
		t.Fatalf("OffsetForTimestamp(50000) = %d, want 120", off)
	}
}

func TestScanBatches(t *testing.T) {
	l := newTestLog(t, testConfig())
	appendN(t, l, 20, 3, 100, 0)
	var bases []int64
	err := l.ScanBatches(31, func(h record.Header) bool {
		bases = append(bases, h.BaseOffset)
		return len(bases) < 5
	})
	if err != nil || len(bases) != 5 || bases[0] != 30 || bases[4] != 42 {
		t.Fatalf("bases %v, %v", bases, err)
	}
}

func TestTopicIDAndReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-3")
	id := [16]byte{1, 2, 3}
	l := openTestLog(t, dir, testConfig(), OpenOptions{TopicID: &id})
	appendN(t, l, 5, 2, 10, 0)
	l.Close()
	if _, err := l.Append(makeBatch(t, batchSpec{n: 1}), AppendOptions{LogAppendTime: -1}); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("append after close: %v", err)
	}
	l = openTestLog(t, dir, testConfig(), OpenOptions{CleanShutdown: true})
	defer l.Close()
	if got, ok := l.TopicID(); !ok || got != id {
		t.Fatalf("topic id %x %v", got, ok)
	}
	if l.TopicPartition() != (TopicPartition{"orders", 3}) || l.LogEndOffset() != 10 {
		t.Fatalf("reopened %v LEO %d", l.TopicPartition(), l.LogEndOffset())
	}
}
