package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gregor/storage/record"
	"gregor/storage/segment"
)

// kvRec is one keyed record for the cleaner tests; a nil value is a tombstone.
type kvRec struct {
	key   string
	value []byte
}

// appendKV appends one batch of recs (timestamps ts, ts+1, …), optionally
// from producer pid (sequence seq), and returns its base offset.
func appendKV(t testing.TB, l *Log, ts int64, pid int64, seq int32, recs ...kvRec) int64 {
	t.Helper()
	opts := record.BatchOptions{BaseTimestamp: ts, PartitionLeaderEpoch: -1}
	if pid >= 0 {
		opts.Producer = &record.Producer{ID: pid, Epoch: 0, BaseSequence: seq}
	}
	brs := make([]record.BatchRecord, len(recs))
	for i, r := range recs {
		brs[i] = record.BatchRecord{Key: []byte(r.key), Value: r.value, TimestampDelta: int64(i)}
	}
	b, err := record.BuildBatch(opts, brs)
	if err != nil {
		t.Fatal(err)
	}
	info, err := l.Append(b, AppendOptions{LeaderEpoch: 0, LogAppendTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	return info.FirstOffset
}

type logRec struct {
	off   int64
	key   string
	value string
	tomb  bool
}

// readLog reads every record from the log start to the log end.
func readLog(t testing.TB, l *Log) ([]logRec, []record.Header) {
	t.Helper()
	fd, err := l.Read(l.LogStartOffset(), 1<<30, l.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	b := readAll(t, fd)
	var recs []logRec
	var hs []record.Header
	for len(b) > 0 {
		h, batch, err := record.ValidateIntegrity(b)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		if err := record.Records(h, batch, 1<<24, func(r *record.Record) error {
			recs = append(recs, logRec{off: r.Offset(&h), key: string(r.Key), value: string(r.Value), tomb: r.Value == nil})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		b = b[len(batch):]
	}
	return recs, hs
}

func compactConfig() LogConfig {
	c := testConfig()
	c.Compact, c.DeleteDisabled = true, true
	c.SegmentBytes = 1024
	c.MinCleanableDirtyRatio = 0.01
	c.DeleteRetentionMs = 1000
	return c
}

// fillKeys appends rounds × keys records, one batch per record, values
// "<key>@<round>", and returns the offset of each key's last write.
func fillKeys(t testing.TB, l *Log, rounds, keys int, ts int64) map[string]int64 {
	last := map[string]int64{}
	for r := 0; r < rounds; r++ {
		for k := 0; k < keys; k++ {
			key := fmt.Sprintf("key-%d", k)
			last[key] = appendKV(t, l, ts, -1, -1, kvRec{key, []byte(fmt.Sprintf("%s@%d-%s", key, r, "padpadpadpadpadpadpadpad"))})
		}
	}
	return last
}

func TestCleanKeepsLatestValuePerKeyAtItsOffset(t *testing.T) {
	l := newTestLog(t, compactConfig())
	last := fillKeys(t, l, 20, 5, time.Now().UnixMilli())
	leo := l.LogEndOffset()
	l.SetHighWatermark(leo)
	segsBefore, sizeBefore := l.NumSegments(), l.Size()
	activeBase := l.segs.Load().active().BaseOffset()

	st, err := l.Clean(0, time.Now(), DefaultCleanerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if st.Range.End != activeBase || st.SegmentsIn == 0 || st.BytesWritten >= st.BytesRead {
		t.Fatalf("stats %+v (active base %d)", st, activeBase)
	}
	if l.LogEndOffset() != leo || l.LogStartOffset() != 0 {
		t.Fatalf("leo %d start %d, want %d 0", l.LogEndOffset(), l.LogStartOffset(), leo)
	}
	recs, _ := readLog(t, l)
	seen := map[string]int64{}
	prev := int64(-1)
	for _, r := range recs {
		if r.off <= prev {
			t.Fatalf("offset %d after %d", r.off, prev)
		}
		prev = r.off
		if r.off < activeBase {
			if _, dup := seen[r.key]; dup {
				t.Fatalf("key %s twice in the cleaned section (offsets %d and %d)", r.key, seen[r.key], r.off)
			}
			// Below the active segment only a key's last write may remain,
			// unless its last write is in the active segment.
			if r.off != last[r.key] && last[r.key] < activeBase {
				t.Fatalf("key %s at %d survived; its latest is %d", r.key, r.off, last[r.key])
			}
			seen[r.key] = r.off
		}
		if want := fmt.Sprintf("%s@", r.key); r.value[:len(want)] != want {
			t.Fatalf("record %+v", r)
		}
	}
	for key, off := range last {
		found := false
		for _, r := range recs {
			if r.key == key && r.off == off {
				found = r.value == fmt.Sprintf("%s@19-padpadpadpadpadpadpadpad", key)
			}
		}
		if !found {
			t.Fatalf("latest %s at %d missing", key, off)
		}
	}
	// The first pass groups by the original sizes (one segment each); a
	// second pass merges the small cleaned segments.
	if _, err := l.Clean(0, time.Now(), DefaultCleanerConfig()); err != nil {
		t.Fatal(err)
	}
	if l.NumSegments() >= segsBefore || l.Size() >= sizeBefore {
		t.Fatalf("segments %d→%d, bytes %d→%d", segsBefore, l.NumSegments(), sizeBefore, l.Size())
	}
	// Appends continue at the same offsets; a reopen sees the same log.
	if off := appendKV(t, l, time.Now().UnixMilli(), -1, -1, kvRec{"key-0", []byte("after")}); off != leo {
		t.Fatalf("next append at %d, want %d", off, leo)
	}
	dir := l.Dir()
	want, _ := readLog(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openTestLog(t, dir, compactConfig(), OpenOptions{})
	defer l2.Close()
	if got, _ := readLog(t, l2); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after reopen\n got %v\nwant %v", got, want)
	}
}

func TestCleanTombstonesExpireAfterDeleteRetention(t *testing.T) {
	cfg := compactConfig()
	l := newTestLog(t, cfg)
	now := time.Now()
	ts := now.UnixMilli()
	appendKV(t, l, ts, -1, -1, kvRec{"dead", []byte("v1")})
	tomb := appendKV(t, l, ts, -1, -1, kvRec{"dead", nil})
	fillKeys(t, l, 10, 3, ts) // rolls segments past the tombstone
	l.SetHighWatermark(l.LogEndOffset())

	if _, err := l.Clean(0, now, DefaultCleanerConfig()); err != nil {
		t.Fatal(err)
	}
	recs, hs := readLog(t, l)
	var tombs []logRec
	for _, r := range recs {
		if r.key == "dead" {
			tombs = append(tombs, r)
		}
	}
	if len(tombs) != 1 || !tombs[0].tomb || tombs[0].off != tomb {
		t.Fatalf("after the first clean: %v, want only the tombstone at %d", tombs, tomb)
	}
	var horizon int64
	for _, h := range hs {
		if h.BaseOffset == tomb {
			horizon, _ = h.DeleteHorizonMs()
		}
	}
	if horizon != now.UnixMilli()+cfg.DeleteRetentionMs {
		t.Fatalf("delete horizon %d, want %d", horizon, now.UnixMilli()+cfg.DeleteRetentionMs)
	}
	// Still inside delete.retention.ms: kept.
	if _, err := l.Clean(0, now.Add(500*time.Millisecond), DefaultCleanerConfig()); err != nil {
		t.Fatal(err)
	}
	if recs, _ := readLog(t, l); !hasKey(recs, "dead") {
		t.Fatal("tombstone removed before delete.retention.ms")
	}
	// After it: gone, and the offsets of everything else unchanged.
	before := without(recs, "dead")
	if _, err := l.Clean(0, now.Add(1500*time.Millisecond), DefaultCleanerConfig()); err != nil {
		t.Fatal(err)
	}
	after, _ := readLog(t, l)
	if hasKey(after, "dead") {
		t.Fatal("tombstone kept after delete.retention.ms")
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("other records changed\n got %v\nwant %v", after, before)
	}
}

func hasKey(recs []logRec, key string) bool {
	for _, r := range recs {
		if r.key == key {
			return true
		}
	}
	return false
}

func without(recs []logRec, key string) []logRec {
	var out []logRec
	for _, r := range recs {
		if r.key != key {
			out = append(out, r)
		}
	}
	return out
}

func TestCleanPreservesProducerState(t *testing.T) {
	l := newTestLog(t, compactConfig())
	ts := time.Now().UnixMilli()
	// Producer 7 writes k twice (its only batches), producer 8 overwrites
	// k later: producer 7's records all go, its last batch stays empty.
	appendKV(t, l, ts, 7, 0, kvRec{"k", []byte("p7-a")})
	p7last := appendKV(t, l, ts, 7, 1, kvRec{"k", []byte("p7-b")}, kvRec{"k", []byte("p7-c")})
	appendKV(t, l, ts, 8, 0, kvRec{"k", []byte("p8")})
	fillKeys(t, l, 10, 3, ts)
	l.SetHighWatermark(l.LogEndOffset())
	if _, err := l.Clean(0, time.Now(), DefaultCleanerConfig()); err != nil {
		t.Fatal(err)
	}
	recs, hs := readLog(t, l)
	for _, r := range recs {
		if r.key == "k" && r.value != "p8" {
			t.Fatalf("superseded record survived: %+v", r)
		}
	}
	var p7 []record.Header
	for _, h := range hs {
		if h.ProducerID == 7 {
			p7 = append(p7, h)
		}
	}
	if len(p7) != 1 || p7[0].BaseOffset != p7last || p7[0].RecordCount != 0 || p7[0].LastOffsetDelta != 1 ||
		p7[0].BaseSequence != 1 || p7[0].LastSequence() != 2 {
		t.Fatalf("producer 7 batches after cleaning: %+v", p7)
	}
	// Producer state rebuilt by a header scan still finds producer 7's last sequence.
	lastSeq := map[int64]int32{}
	if err := l.ScanBatches(0, func(h record.Header) bool {
		if h.HasProducerID() {
			lastSeq[h.ProducerID] = h.LastSequence()
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if lastSeq[7] != 2 || lastSeq[8] != 0 {
		t.Fatalf("last sequences %v", lastSeq)
	}
}

func TestCleanRespectsHighWatermarkAndCompactionLag(t *testing.T) {
	cfg := compactConfig()
	l := newTestLog(t, cfg)
	ts := time.Now().UnixMilli()
	fillKeys(t, l, 20, 5, ts)
	if r := l.CleanableRange(0, time.Now()); r.End != 0 {
		t.Fatalf("unknown high watermark: range %+v", r)
	}
	l.SetHighWatermark(30)
	r := l.CleanableRange(0, time.Now())
	if r.End > 30 || r.End == 0 {
		t.Fatalf("high watermark 30: range %+v", r)
	}
	st, err := l.Clean(0, time.Now(), DefaultCleanerConfig())
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := readLog(t, l)
	n := 0
	for _, rr := range recs {
		if rr.off >= st.Range.End {
			n++
		}
	}
	if n != int(l.LogEndOffset()-st.Range.End) {
		t.Fatalf("records at or above %d were touched: %d of %d remain", st.Range.End, n, l.LogEndOffset()-st.Range.End)
	}
	l.SetHighWatermark(l.LogEndOffset())
	cfg.MinCompactionLagMs = 3600_000
	l.SetConfig(cfg)
	if r := l.CleanableRange(st.Range.End, time.Now()); r.End != r.FirstDirty {
		t.Fatalf("min.compaction.lag.ms: range %+v", r)
	}
	cfg.MinCompactionLagMs, cfg.MaxCompactionLagMs, cfg.MinCleanableDirtyRatio = 0, 1, 0.99
	l.SetConfig(cfg)
	r = l.CleanableRange(st.Range.End, time.Now().Add(time.Second))
	if !r.Forced || !r.NeedsCleaning(0.99) {
		t.Fatalf("max.compaction.lag.ms: range %+v", r)
	}
}

// TestCleanCrashLeftovers: a crash while writing (.cleaned files) loses
// nothing; a crash after the .swap rename completes the swap at open.
func TestCleanCrashLeftovers(t *testing.T) {
	cfg := compactConfig()
	build := func(dir string) (*Log, []logRec) {
		l := openTestLog(t, dir, cfg, OpenOptions{})
		fillKeys(t, l, 12, 4, 1_700_000_000_000)
		l.SetHighWatermark(l.LogEndOffset())
		recs, _ := readLog(t, l)
		return l, recs
	}
	root := t.TempDir()
	// The cleaned result, computed on a twin log.
	twin, _ := build(filepath.Join(root, "twin-0"))
	big := cfg
	big.SegmentBytes = 1 << 20 // one group
	twin.SetConfig(big)
	st, err := twin.Clean(0, time.Now(), DefaultCleanerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if st.SegmentsOut != 1 {
		t.Fatalf("want one cleaned group, got %+v", st)
	}
	cleanedRecs, _ := readLog(t, twin)
	cleanedBytes, err := os.ReadFile(segment.Path(twin.Dir(), 0, segment.LogSuffix))
	if err != nil {
		t.Fatal(err)
	}
	twin.Close()

	t.Run("cleaned discarded", func(t *testing.T) {
		dir := filepath.Join(root, "a-0")
		l, orig := build(dir)
		l.Close()
		for _, suf := range []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix} {
			if err := os.WriteFile(segment.Path(dir, 0, suf+segment.CleanedSuffix), cleanedBytes[:len(cleanedBytes)/2], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l2 := openTestLog(t, dir, cfg, OpenOptions{})
		defer l2.Close()
		if got, _ := readLog(t, l2); fmt.Sprint(got) != fmt.Sprint(orig) {
			t.Fatalf("log changed by a discarded .cleaned file")
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "*"+segment.CleanedSuffix)); len(m) != 0 {
			t.Fatalf("leftovers %v", m)
		}
	})
	t.Run("swap completed", func(t *testing.T) {
		dir := filepath.Join(root, "b-0")
		l, _ := build(dir)
		l.Close()
		if err := os.WriteFile(segment.Path(dir, 0, segment.LogSuffix+segment.SwapSuffix), cleanedBytes, 0o644); err != nil {
			t.Fatal(err)
		}
		l2 := openTestLog(t, dir, cfg, OpenOptions{})
		defer l2.Close()
		if got, _ := readLog(t, l2); fmt.Sprint(got) != fmt.Sprint(cleanedRecs) {
			t.Fatalf("after swap recovery\n got %v\nwant %v", got, cleanedRecs)
		}
		if l2.NumSegments() != 1+int(twinSegmentsAfter(t, root)) {
			t.Fatalf("segments %d", l2.NumSegments())
		}
	})
	t.Run("swap with old segments already deleted", func(t *testing.T) {
		dir := filepath.Join(root, "c-0")
		l, _ := build(dir)
		l.Close()
		// Crash between renaming the old segments .deleted and the .swap.
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			base, suf, ok := segment.ParseName(e.Name())
			if ok && suf == segment.LogSuffix && base < st.Range.End {
				os.Rename(filepath.Join(dir, e.Name()), filepath.Join(dir, e.Name()+segment.DeletedSuffix))
			}
		}
		if err := os.WriteFile(segment.Path(dir, 0, segment.LogSuffix+segment.SwapSuffix), cleanedBytes, 0o644); err != nil {
			t.Fatal(err)
		}
		l2 := openTestLog(t, dir, cfg, OpenOptions{})
		defer l2.Close()
		if got, _ := readLog(t, l2); fmt.Sprint(got) != fmt.Sprint(cleanedRecs) {
			t.Fatalf("after swap recovery\n got %v\nwant %v", got, cleanedRecs)
		}
	})
}

// twinSegmentsAfter counts the twin log's .log files other than the cleaned one.
func twinSegmentsAfter(t *testing.T, root string) int64 {
	m, _ := filepath.Glob(filepath.Join(root, "twin-0", "*.log"))
	return int64(len(m) - 1)
}

// TestCleanConcurrentReaders: readers reading (and holding regions) while
// groups are swapped always see intact batches with increasing offsets,
// and a region taken before the swap still reads its original bytes.
func TestCleanConcurrentReaders(t *testing.T) {
	cfg := compactConfig()
	l := newTestLog(t, cfg)
	fillKeys(t, l, 30, 6, time.Now().UnixMilli())
	l.SetHighWatermark(l.LogEndOffset())
	held, err := l.Read(0, 1<<30, l.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	heldBytes := readRegions(t, held)

	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	var reads atomic.Int64
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 100000 && !stop.Load(); n++ {
				fd, err := l.Read(0, 1<<30, l.LogEndOffset())
				if err != nil {
					errs <- err
					return
				}
				b := make([]byte, 0, fd.Bytes)
				for _, r := range fd.Regions {
					buf := make([]byte, r.Len)
					if _, err := r.File.ReadAt(buf, r.Pos); err != nil {
						errs <- err
						fd.Release()
						return
					}
					b = append(b, buf...)
				}
				fd.Release()
				prev := int64(-1)
				for len(b) > 0 {
					h, batch, err := record.ValidateIntegrity(b)
					if err != nil {
						errs <- err
						return
					}
					if h.BaseOffset <= prev {
						errs <- fmt.Errorf("offset %d after %d", h.BaseOffset, prev)
						return
					}
					prev = h.LastOffset()
					b = b[len(batch):]
				}
				reads.Add(1)
			}
		}()
	}
	for round := 0; round < 5; round++ {
		fillKeys(t, l, 3, 6, time.Now().UnixMilli())
		l.SetHighWatermark(l.LogEndOffset())
		if _, err := l.Clean(0, time.Now(), DefaultCleanerConfig()); err != nil {
			t.Fatal(err)
		}
		if _, err := l.retain(time.Now()); err != nil { // unlinks the swapped-out files (delay 0)
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for reads.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if again := readRegions(t, held); string(again) != string(heldBytes) {
		t.Fatal("a region held across the swap changed")
	}
	held.Release()
}

func readRegions(t *testing.T, fd FetchData) []byte {
	t.Helper()
	var out []byte
	for _, r := range fd.Regions {
		buf := make([]byte, r.Len)
		if _, err := r.File.ReadAt(buf, r.Pos); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf...)
	}
	return out
}

func TestLogManagerCleanerPassCheckpoint(t *testing.T) {
	dir := t.TempDir()
	m, err := NewLogManager(LogManagerConfig{Dirs: []string{dir}, Defaults: testConfig()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tp := TopicPartition{Topic: "c", Partition: 0}
	l, err := m.GetOrCreate(tp, compactConfig())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := m.GetOrCreate(TopicPartition{Topic: "d", Partition: 0}, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	fillKeys(t, l, 20, 5, time.Now().UnixMilli())
	fillKeys(t, plain, 20, 5, time.Now().UnixMilli())
	l.SetHighWatermark(l.LogEndOffset())
	plain.SetHighWatermark(plain.LogEndOffset())
	plainSize := plain.Size()
	sts, err := m.CleanerPass(time.Now(), DefaultCleanerConfig())
	if err != nil || len(sts) != 1 {
		t.Fatalf("pass: %v %+v", err, sts)
	}
	end := sts[0].Range.End
	if off, ok := m.CleanerCheckpoint(tp); !ok || off != end || end == 0 {
		t.Fatalf("checkpoint %d %v, want %d", off, ok, end)
	}
	data, err := os.ReadFile(filepath.Join(dir, "cleaner-offset-checkpoint"))
	if err != nil || string(data) != fmt.Sprintf("0\n1\nc 0 %d\n", end) {
		t.Fatalf("cleaner-offset-checkpoint %q %v", data, err)
	}
	if plain.Size() != plainSize {
		t.Fatal("a delete-policy log was cleaned")
	}
	// Nothing new is dirty: the next pass does nothing.
	if sts, err := m.CleanerPass(time.Now(), DefaultCleanerConfig()); err != nil || len(sts) != 0 {
		t.Fatalf("second pass: %v %+v", err, sts)
	}
}
