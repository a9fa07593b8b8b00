package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gregor/storage/checkpoint"
)

// copyAll appends cur's batches from fut's end to fut, as the partition
// layer's copier does.
func copyAll(t *testing.T, cur, fut *Log) {
	t.Helper()
	for fut.LogEndOffset() < cur.LogEndOffset() {
		fd, err := cur.Read(fut.LogEndOffset(), 1<<20, cur.LogEndOffset())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fut.AppendAsFollower(readAll(t, fd)); err != nil {
			t.Fatal(err)
		}
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestFutureLogCopySwapAndRestart(t *testing.T) {
	root := t.TempDir()
	d1, d2 := filepath.Join(root, "d1"), filepath.Join(root, "d2")
	m := newManager(t, d1, d2)
	tp := TopicPartition{"mv", 0}
	cur, err := m.GetOrCreate(tp, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := m.LogDir(tp); d != d1 {
		t.Fatalf("created in %s", d)
	}
	appendN(t, cur, 20, 5, 50, 0) // several 4 KiB segments
	if err := cur.DeleteRecordsBefore(10); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, mustRead(t, cur, 10, 1<<30, cur.LogEndOffset()))

	if _, err := m.CreateFuture(tp, d1); err == nil {
		t.Fatal("future log created in the current dir")
	}
	fut, err := m.CreateFuture(tp, d2)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := m.CreateFuture(tp, d2); err != nil || again != fut {
		t.Fatalf("second CreateFuture: %v", err)
	}
	if names := dirNames(t, d2); len(names) != 1 || !strings.HasPrefix(names[0], "mv-0.") || !strings.HasSuffix(names[0], "-future") || len(names[0]) != len("mv-0.")+32+len("-future") {
		t.Fatalf("future dir %v", names)
	}
	if err := fut.TruncateFullyAndStartAt(cur.LogStartOffset()); err != nil {
		t.Fatal(err)
	}
	// Half copied: DescribeDirs shows the future replica and its lag.
	fd, _ := cur.Read(10, 600, cur.LogEndOffset())
	if _, err := fut.AppendAsFollower(readAll(t, fd)); err != nil {
		t.Fatal(err)
	}
	var seen bool
	for _, d := range m.DescribeDirs() {
		for _, r := range d.Replicas {
			if r.IsFuture {
				seen = true
				if abs, _ := filepath.Abs(d2); d.Dir != abs || r.OffsetLag != cur.LogEndOffset()-fut.LogEndOffset() || r.OffsetLag <= 0 {
					t.Errorf("future replica %+v in %s", r, d.Dir)
				}
			}
		}
	}
	if !seen {
		t.Fatal("no future replica described")
	}
	copyAll(t, cur, fut)
	if fut.LeaderEpochs().Entries()[0].StartOffset != 10 {
		t.Errorf("future epoch cache %v", fut.LeaderEpochs().Entries())
	}
	l, err := m.ReplaceCurrentWithFuture(tp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cur.Read(10, 100, 100); !errors.Is(err, ErrLogClosed) {
		t.Errorf("old log read: %v", err)
	}
	if d, _ := m.LogDir(tp); d != d2 || l.Dir() != filepath.Join(d2, "mv-0") || l.LogStartOffset() != 10 || l.LogEndOffset() != 100 {
		t.Fatalf("after swap: dir %s %s [%d, %d)", d, l.Dir(), l.LogStartOffset(), l.LogEndOffset())
	}
	if got := readAll(t, mustRead(t, l, 10, 1<<30, l.LogEndOffset())); !bytes.Equal(got, want) {
		t.Fatal("swapped log differs from the current one")
	}
	if _, _, ok := m.Future(tp); ok {
		t.Fatal("future still registered")
	}
	es, _ := checkpoint.ReadOffsets(filepath.Join(d2, checkpoint.LogStartOffsetFile))
	if len(es) != 1 || es[0].Offset != 10 {
		t.Errorf("d2 log start checkpoint %v", es)
	}
	if err := m.Close(); err != nil { // waits for the background removal
		t.Fatal(err)
	}
	if names := dirNames(t, d1); len(names) != 0 {
		t.Errorf("d1 still holds %v", names)
	}
	m2 := newManager(t, d1, d2)
	defer m2.Close()
	l2, ok := m2.Get(tp)
	if d, _ := m2.LogDir(tp); !ok || d != d2 || l2.LogStartOffset() != 10 || l2.LogEndOffset() != 100 {
		t.Fatalf("after restart: %v %s", ok, d)
	}
}

func TestFutureLogLeftoversAtStartup(t *testing.T) {
	root := t.TempDir()
	d1, d2 := filepath.Join(root, "d1"), filepath.Join(root, "d2")
	m := newManager(t, d1, d2)
	a, b := TopicPartition{"a", 0}, TopicPartition{"b", 0}
	for _, tp := range []TopicPartition{a, b} {
		l, _ := m.GetOrCreate(tp, testConfig())
		appendN(t, l, 3, 2, 10, 0)
	}
	la, _ := m.Get(a)
	fa, err := m.CreateFuture(a, otherDir(m, a, d1, d2))
	if err != nil {
		t.Fatal(err)
	}
	copyAll(t, la, fa)
	lb, _ := m.Get(b)
	bDir, _ := m.LogDir(b)
	fb, err := m.CreateFuture(b, otherDir(m, b, d1, d2))
	if err != nil {
		t.Fatal(err)
	}
	copyAll(t, lb, fb)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// b's swap was interrupted after its current dir was renamed for
	// deletion: only the future dir is left.
	if err := os.Rename(filepath.Join(bDir, "b-0"), filepath.Join(bDir, "b-0.0123456789abcdef0123456789abcdef-delete")); err != nil {
		t.Fatal(err)
	}
	m2 := newManager(t, d1, d2)
	defer m2.Close()
	if f, dir, ok := m2.Future(a); !ok || dir != otherDir(m2, a, d1, d2) || f.LogEndOffset() != 6 {
		t.Fatalf("a's future log not loaded: %v %s", ok, dir)
	}
	lb2, ok := m2.Get(b)
	if d, _ := m2.LogDir(b); !ok || d == bDir || lb2.LogEndOffset() != 6 || filepath.Base(lb2.Dir()) != "b-0" {
		t.Fatalf("b's future log not promoted: %v %s", ok, d)
	}
	if _, _, ok := m2.Future(b); ok {
		t.Fatal("b still has a future log")
	}
	for _, n := range dirNames(t, bDir) {
		if strings.HasPrefix(n, "b-0") {
			t.Errorf("%s holds %s", bDir, n)
		}
	}
	// Delete removes the future log too; DropFuture removes just it.
	if err := m2.DropFuture(a); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := m2.Future(a); ok {
		t.Fatal("future log not dropped")
	}
	for _, d := range []string{d1, d2} {
		for _, n := range dirNames(t, d) {
			if strings.HasSuffix(n, "-future") || strings.HasSuffix(n, "-delete") {
				t.Errorf("%s left in %s", n, d)
			}
		}
	}
}

func otherDir(m *LogManager, tp TopicPartition, d1, d2 string) string {
	if d, _ := m.LogDir(tp); d == d1 {
		return d2
	}
	return d1
}

func TestResolveLogDirAndPreferredDir(t *testing.T) {
	root := t.TempDir()
	d1, d2 := filepath.Join(root, "d1"), filepath.Join(root, "d2")
	m := newManager(t, d1, d2)
	defer m.Close()
	if d, err := m.ResolveLogDir(d2); err != nil || d != d2 {
		t.Fatalf("resolve %s: %q %v", d2, d, err)
	}
	for _, bad := range []string{"/nope", "d1", filepath.Join(root, "d3")} {
		if _, err := m.ResolveLogDir(bad); !errors.Is(err, ErrLogDirNotFound) || !strings.Contains(err.Error(), "Log dir "+bad+" is not found in the config.") {
			t.Errorf("resolve %q: %v", bad, err)
		}
	}
	tp := TopicPartition{"p", 0}
	m.SetPreferredDir(tp, d2) // d1 would be chosen otherwise (first, fewest)
	if _, err := m.GetOrCreate(tp, testConfig()); err != nil {
		t.Fatal(err)
	}
	if d, _ := m.LogDir(tp); d != d2 {
		t.Fatalf("created in %s, want the preferred %s", d, d2)
	}
	if _, ok := m.PreferredDir(tp); ok {
		t.Error("preferred dir kept after creation")
	}
	m.SetPreferredDir(tp, d2) // already there: not recorded
	if _, ok := m.PreferredDir(tp); ok {
		t.Error("preferred dir recorded for the current dir")
	}
}

// A swap whose second rename fails (the destination name is taken) puts
// the current dir back, so the partition's restart (Reopen) finds its log
// with every record, and the next start loads the copy as a future log
// again.
func TestFutureLogSwapRollsBack(t *testing.T) {
	root := t.TempDir()
	d1, d2 := filepath.Join(root, "d1"), filepath.Join(root, "d2")
	m := newManager(t, d1, d2)
	tp := TopicPartition{"rb", 0}
	cur, err := m.GetOrCreate(tp, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, cur, 10, 5, 50, 0)
	want := readAll(t, mustRead(t, cur, 0, 1<<30, cur.LogEndOffset()))
	fut, err := m.CreateFuture(tp, d2)
	if err != nil {
		t.Fatal(err)
	}
	copyAll(t, cur, fut)
	// A non-empty directory where the future dir would be renamed to.
	if err := os.MkdirAll(filepath.Join(d2, "rb-0", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ReplaceCurrentWithFuture(tp); err == nil {
		t.Fatal("swap onto a taken name succeeded")
	}
	if _, _, ok := m.Future(tp); ok {
		t.Error("closed future log still registered")
	}
	if d, _ := m.LogDir(tp); d != d1 {
		t.Errorf("log dir after the failed swap: %s", d)
	}
	l, err := m.Reopen(tp)
	if err != nil {
		t.Fatalf("reopen after a failed swap: %v", err)
	}
	if l.Dir() != filepath.Join(d1, "rb-0") || !bytes.Equal(readAll(t, mustRead(t, l, 0, 1<<30, l.LogEndOffset())), want) {
		t.Fatalf("reopened %s differs", l.Dir())
	}
	if err := os.RemoveAll(filepath.Join(d2, "rb-0")); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m2 := newManager(t, d1, d2)
	defer m2.Close()
	if f, dir, ok := m2.Future(tp); !ok || dir != d2 || f.LogEndOffset() != l.LogEndOffset() {
		t.Fatalf("future after restart: %v %s", ok, dir)
	}
}
