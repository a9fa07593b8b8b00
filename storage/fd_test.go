package storage

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gregor/storage/segment"
)

// openFDs lists this process's open descriptors whose target lies under
// dir (readlink of /proc/self/fd/*; unlinked files read "... (deleted)").
func openFDs(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var out []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir) {
			out = append(out, target)
		}
	}
	return out
}

// mappings counts this process's memory mappings of files under dir.
func mappings(t testing.TB, dir string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, dir) {
			n++
		}
	}
	return n
}

func newCache(t testing.TB, limit int) *segment.FileCache {
	t.Helper()
	c, err := segment.NewFileCache(limit)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A log of 40 segments under a cache of 3: at most 3 .log descriptors are
// open (3 descriptors per segment, 120, before mmapped indexes and the
// cache), none of them an index, at most 6 index mappings; reading every
// segment from the start (each one cold) returns every batch byte for
// byte, and Close leaves nothing open.
func TestManySegmentsHoldBoundedDescriptors(t *testing.T) {
	root := t.TempDir()
	files := newCache(t, 3)
	l := openTestLog(t, filepath.Join(root, "t-0"), testConfig(), OpenOptions{FileCache: files})
	want := appendN(t, l, 200, 4, 60, 0) // ~17 batches per 4 KiB segment
	if n := l.NumSegments(); n < 10 {
		t.Fatalf("%d segments, want many", n)
	}
	check := func(when string) {
		t.Helper()
		fds := openFDs(t, root)
		if len(fds) > 3 {
			t.Fatalf("%s: %d descriptors open, want <= 3: %v", when, len(fds), fds)
		}
		for _, p := range fds {
			if !strings.HasSuffix(p, segment.LogSuffix) {
				t.Fatalf("%s: non-.log descriptor %s", when, p)
			}
		}
		if m := mappings(t, root); m > 6 {
			t.Fatalf("%s: %d index mappings, want <= 6", when, m)
		}
	}
	check("after appends")
	var got []byte
	for off := int64(0); off < l.LogEndOffset(); {
		fd, err := l.Read(off, 1000, l.LogEndOffset()) // less than a segment: every segment is read cold
		if err != nil {
			t.Fatal(err)
		}
		b := readAll(t, fd)
		hs := splitBatches(t, b)
		got = append(got, b...)
		off = hs[len(hs)-1].NextOffset()
	}
	if !bytes.Equal(got, bytes.Join(want, nil)) {
		t.Fatal("bytes read back through reopened segments differ from those appended")
	}
	check("after reading everything")
	if st := files.Stats(); st.Evictions == 0 || st.Opens <= int64(l.NumSegments()) {
		t.Fatalf("stats %+v: reads of old segments should have reopened evicted ones", st)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if fds := openFDs(t, root); len(fds) != 0 {
		t.Fatalf("after Close: %v", fds)
	}
	if m := mappings(t, root); m != 0 {
		t.Fatalf("after Close: %d mappings", m)
	}
}

// 200 logs sharing a cache of 40: at most 40 descriptors, and the idle
// ones (every log's active segment included) hold none.
func TestManyLogsShareTheDescriptorBudget(t *testing.T) {
	root := t.TempDir()
	files := newCache(t, 40)
	var logs []*Log
	var data [][][]byte
	for i := 0; i < 200; i++ {
		l := openTestLog(t, filepath.Join(root, fmt.Sprintf("t-%d", i)), testConfig(), OpenOptions{FileCache: files})
		t.Cleanup(func() { l.Close() })
		logs = append(logs, l)
		data = append(data, appendN(t, l, 3, 2, 30, 0))
	}
	if fds := openFDs(t, root); len(fds) > 40 {
		t.Fatalf("%d descriptors open for 200 logs, want <= 40", len(fds))
	}
	for i, l := range logs {
		fd, err := l.Read(0, 1<<20, l.LogEndOffset())
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, fd); !bytes.Equal(got, bytes.Join(data[i], nil)) {
			t.Fatalf("log %d read back wrong bytes", i)
		}
	}
	if st := files.Stats(); st.Open > 40 {
		t.Fatalf("cache reports %d open", st.Open)
	}
	if fds := openFDs(t, root); len(fds) > 40 {
		t.Fatalf("%d descriptors open after reading, want <= 40", len(fds))
	}
}

// A reader holding a segment (its FetchData) while retention deletes it:
// the region stays readable with the right bytes (the pinned descriptor
// outlives the unlink and any eviction), and Release closes it.
func TestRetentionDeletesSegmentPinnedByReader(t *testing.T) {
	root := t.TempDir()
	files := newCache(t, 1)
	cfg := testConfig()
	l := openTestLog(t, filepath.Join(root, "t-0"), cfg, OpenOptions{FileCache: files})
	defer l.Close()
	want := appendN(t, l, 60, 4, 60, 0)
	l.SetHighWatermark(l.LogEndOffset())
	held, err := l.Read(0, 1<<10, l.LogEndOffset()) // part of the first segment
	if err != nil {
		t.Fatal(err)
	}
	first := l.segs.Load().segs[0]
	firstPath := first.Files()[0]
	// Touch every other segment: with a cache of 1 this would evict the
	// first segment's descriptor, were it not pinned.
	for off := first.NextOffset(); off < l.LogEndOffset(); off += 4 {
		fd, err := l.Read(off, 1, l.LogEndOffset())
		if err != nil {
			t.Fatal(err)
		}
		fd.Release()
	}
	if err := l.DeleteRecordsBefore(l.LogEndOffset()); err != nil { // delay 0: unlinked now
		t.Fatal(err)
	}
	if _, err := os.Stat(firstPath); !os.IsNotExist(err) {
		t.Fatalf("first segment still on disk: %v", err)
	}
	deleted := 0
	for _, p := range openFDs(t, root) {
		if strings.HasSuffix(p, "(deleted)") {
			deleted++
		}
	}
	if deleted != 1 {
		t.Fatalf("%d unlinked descriptors open, want the pinned one: %v", deleted, openFDs(t, root))
	}
	got := readRegions(t, held)
	if !bytes.HasPrefix(bytes.Join(want, nil), got) || len(got) == 0 {
		t.Fatal("pinned region read wrong bytes after deletion")
	}
	held.Release()
	for _, p := range openFDs(t, root) {
		if strings.HasSuffix(p, "(deleted)") {
			t.Fatalf("descriptor of the deleted segment still open after Release: %s", p)
		}
	}
	// A reader that took its segment list before the deletion and pins
	// afterwards cannot reopen the unlinked file: it gets ErrSegmentClosed.
	if !first.Acquire() {
		return // already closed for good: nothing to reopen
	}
	defer first.Release()
	if _, err := first.Pin(); err == nil {
		t.Fatal("pinned a deleted segment")
	}
}

// Compaction swapping out segments a reader holds, with a descriptor cache
// of 1: the held regions keep their bytes.
func TestCleanSwapsSegmentsPinnedByReader(t *testing.T) {
	cfg := compactConfig()
	root := t.TempDir()
	l := openTestLog(t, filepath.Join(root, "t-0"), cfg, OpenOptions{FileCache: newCache(t, 1)})
	defer l.Close()
	fillKeys(t, l, 30, 6, time.Now().UnixMilli())
	l.SetHighWatermark(l.LogEndOffset())
	held, err := l.Read(0, 1<<30, l.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	before := readRegions(t, held)
	if _, err := l.Clean(0, time.Now(), DefaultCleanerConfig()); err != nil {
		t.Fatal(err)
	}
	if _, err := l.retain(time.Now()); err != nil { // unlinks the swapped-out files
		t.Fatal(err)
	}
	if after := readRegions(t, held); !bytes.Equal(after, before) {
		t.Fatal("regions held across the swap changed")
	}
	held.Release()
	for _, p := range openFDs(t, root) {
		if strings.HasSuffix(p, "(deleted)") {
			t.Fatalf("swapped-out descriptor still open after Release: %s", p)
		}
	}
}

// copyDir copies the regular files of src into dst: the state a kill -9
// leaves on disk (everything written is in the page cache, nothing was
// closed, trimmed or flushed).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
}

// The active segment's indexes are preallocated to segment.index.bytes
// with a zero tail; a kill -9 leaves them so. Recovery rebuilds them (and
// the reopened log reads and appends correctly), also when the clean
// shutdown marker wrongly claims a clean stop: the zero tail fails the
// sanity check. Sealed segments' index files are exactly their entries.
func TestKillLeavesPreallocatedIndexesThatRecoveryRebuilds(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "t-0")
	cfg := testConfig()
	cfg.SegmentIndexBytes = 1 << 20
	l := openTestLog(t, dir, cfg, OpenOptions{FileCache: newCache(t, 4)})
	want := appendN(t, l, 50, 4, 60, 0)
	segs := l.segs.Load().segs
	act := segs[len(segs)-1]
	if fi := fileSize(t, segment.Path(dir, act.BaseOffset(), segment.IndexSuffix)); fi != 1<<20 {
		t.Fatalf("active .index is %d bytes, want preallocated %d", fi, 1<<20)
	}
	if fi := fileSize(t, segment.Path(dir, act.BaseOffset(), segment.TimeIndexSuffix)); fi != (1<<20)/12*12 {
		t.Fatalf("active .timeindex is %d bytes, want preallocated %d", fi, (1<<20)/12*12)
	}
	if fi := fileSize(t, segment.Path(dir, 0, segment.IndexSuffix)); fi == 0 || fi%8 != 0 || fi >= 1<<20 {
		t.Fatalf("sealed .index is %d bytes, want trimmed to its entries", fi)
	}
	leo := l.LogEndOffset()
	for i, clean := range []bool{false, true} {
		crashed := filepath.Join(root, fmt.Sprintf("c%d", i), "t-0")
		copyDir(t, dir, crashed)
		r := openTestLog(t, crashed, cfg, OpenOptions{CleanShutdown: clean, RecoveryPoint: act.BaseOffset(), FileCache: newCache(t, 4)})
		if r.LogEndOffset() != leo {
			t.Fatalf("clean=%v: log end %d after recovery, want %d", clean, r.LogEndOffset(), leo)
		}
		fd, err := r.Read(0, 1<<30, leo)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(readAll(t, fd), bytes.Join(want, nil)) {
			t.Fatalf("clean=%v: recovered log reads wrong bytes", clean)
		}
		// Offset lookups go through the rebuilt index.
		for _, off := range []int64{act.BaseOffset(), leo - 1} {
			fd, err := r.Read(off, 1, leo)
			if err != nil || fd.FirstOffset > off || fd.FirstOffset < off-3 {
				t.Fatalf("clean=%v: read at %d starts at %d, %v", clean, off, fd.FirstOffset, err)
			}
			fd.Release()
		}
		appendN(t, r, 5, 4, 60, 0)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if fi := fileSize(t, segment.Path(crashed, act.BaseOffset(), segment.IndexSuffix)); fi%8 != 0 || fi >= 1<<20 {
			t.Fatalf("clean=%v: .index %d bytes after Close, want trimmed", clean, fi)
		}
	}
	l.Close()
}
