package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gregor/storage/checkpoint"
)

func newManager(t *testing.T, dirs ...string) *LogManager {
	t.Helper()
	m, err := NewLogManager(LogManagerConfig{Dirs: dirs, Defaults: testConfig(), RecoveryThreadsPerDir: 2})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLogManagerPlacementCheckpointsAndRestart(t *testing.T) {
	root := t.TempDir()
	d1, d2 := filepath.Join(root, "d1"), filepath.Join(root, "d2")
	m := newManager(t, d1, d2)
	counts := map[string]int{}
	for p := int32(0); p < 6; p++ {
		tp := TopicPartition{"orders", p}
		l, err := m.GetOrCreate(tp, testConfig())
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, l, int(p)+1, 2, 10, 0)
		d, _ := m.LogDir(tp)
		counts[d]++
	}
	if counts[d1] != 3 || counts[d2] != 3 {
		t.Fatalf("placement %v, want 3 and 3", counts)
	}
	again, _ := m.GetOrCreate(TopicPartition{"orders", 2}, testConfig())
	if again.LogEndOffset() != 6 {
		t.Fatal("GetOrCreate made a second log")
	}
	l0, _ := m.Get(TopicPartition{"orders", 0})
	l0.DeleteRecordsBefore(1)
	if err := m.CheckpointHighWatermarks(map[TopicPartition]int64{{"orders", 0}: 2, {"orders", 5}: 7}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{d1, d2} {
		if _, err := os.Stat(filepath.Join(d, CleanShutdownFile)); err != nil {
			t.Fatalf("no clean shutdown marker in %s", d)
		}
	}
	es, err := checkpoint.ReadOffsets(filepath.Join(d1, checkpoint.RecoveryPointFile))
	if err != nil || len(es) != 3 {
		t.Fatalf("recovery points %v %v", es, err)
	}

	m = newManager(t, d1, d2)
	defer m.Close()
	if len(m.All()) != 6 {
		t.Fatalf("%d logs after restart", len(m.All()))
	}
	for _, d := range []string{d1, d2} {
		if _, err := os.Stat(filepath.Join(d, CleanShutdownFile)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("marker not removed at startup in %s", d)
		}
	}
	hw := m.HighWatermarks()
	if hw[TopicPartition{"orders", 0}] != 2 || hw[TopicPartition{"orders", 5}] != 7 || len(hw) != 2 {
		t.Fatalf("high watermarks %v", hw)
	}
	l0, _ = m.Get(TopicPartition{"orders", 0})
	l5, _ := m.Get(TopicPartition{"orders", 5})
	if l0.LogStartOffset() != 1 || l5.LogEndOffset() != 12 {
		t.Fatalf("start %d end %d", l0.LogStartOffset(), l5.LogEndOffset())
	}
	// Delete removes the directory for good.
	if err := m.Delete(TopicPartition{"orders", 5}); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Get(TopicPartition{"orders", 5}); ok {
		t.Fatal("still hosted")
	}
	if _, err := os.Stat(l5.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dir still there: %v", err)
	}
	// The records' timestamp 0 is past retention.ms: the one log left
	// with a known high watermark (orders-0, at its end) loses its one
	// segment (Kafka rolls an empty one first); the others keep theirs
	// until the high watermark is known; the deleted log is not visited.
	if n, err := m.RetentionPass(time.Now()); err != nil || n != 1 {
		t.Fatalf("retention %d %v", n, err)
	}
	if err := m.FlushPass(time.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestLogManagerUncleanRestartRecovers(t *testing.T) {
	d := filepath.Join(t.TempDir(), "d")
	m := newManager(t, d)
	l, _ := m.GetOrCreate(TopicPartition{"t", 0}, testConfig())
	appendN(t, l, 10, 2, 10, 0)
	// Crash: no Close, so no marker; a half-written batch at the end.
	f, _ := os.OpenFile(filepath.Join(l.Dir(), "00000000000000000000.log"), os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 1, 0, 1, 2})
	f.Close()
	l.releaseAll()
	m.unlockAll()
	m2 := newManager(t, d)
	defer m2.Close()
	l2, _ := m2.Get(TopicPartition{"t", 0})
	if l2.LogEndOffset() != 20 {
		t.Fatalf("LEO %d", l2.LogEndOffset())
	}
}

func TestLogManagerOfflineDirAndDuplicates(t *testing.T) {
	root := t.TempDir()
	bad := filepath.Join(root, "not-a-dir")
	os.WriteFile(bad, []byte("x"), 0o644)
	good := filepath.Join(root, "good")
	m := newManager(t, bad, good)
	off := m.OfflineDirs()
	if len(off) != 1 || off[bad] == nil {
		t.Fatalf("offline %v", off)
	}
	for p := int32(0); p < 3; p++ {
		if _, err := m.GetOrCreate(TopicPartition{"x", p}, testConfig()); err != nil {
			t.Fatal(err)
		}
		if d, _ := m.LogDir(TopicPartition{"x", p}); d != good {
			t.Fatalf("placed in %s", d)
		}
	}
	// A second manager on the same dir is refused by the dir lock.
	m2 := newManager(t, good)
	if m2.OfflineDirs()[good] == nil {
		t.Fatal("locked dir not reported offline")
	}
	if _, err := m2.GetOrCreate(TopicPartition{"x", 9}, testConfig()); !errors.Is(err, ErrNoOnlineLogDir) {
		t.Fatalf("create with no dir: %v", err)
	}
	m2.Close()
	m.Close()

	other := filepath.Join(root, "other")
	os.MkdirAll(filepath.Join(other, "x-1"), 0o755)
	if _, err := NewLogManager(LogManagerConfig{Dirs: []string{good, other}, Defaults: testConfig()}); err == nil {
		t.Fatal("duplicate partition accepted")
	}
	// The refused start released its locks: a normal start works.
	m3 := newManager(t, good)
	m3.Close()
}

func TestEnsureMetaProperties(t *testing.T) {
	d := filepath.Join(t.TempDir(), "d")
	m := newManager(t, d)
	defer m.Close()
	if err := m.EnsureMetaProperties(4, "clusterA"); err != nil {
		t.Fatal(err)
	}
	mp, err := checkpoint.ReadMetaProperties(d)
	if err != nil || mp != (checkpoint.MetaProperties{Version: 0, BrokerID: 4, ClusterID: "clusterA"}) {
		t.Fatalf("meta %+v %v", mp, err)
	}
	if err := m.EnsureMetaProperties(4, "clusterA"); err != nil {
		t.Fatal(err)
	}
	if err := m.EnsureMetaProperties(5, "clusterA"); !errors.Is(err, ErrInconsistentBrokerID) {
		t.Fatalf("other broker: %v", err)
	}
	if err := m.EnsureMetaProperties(4, "clusterB"); !errors.Is(err, ErrInconsistentBrokerID) {
		t.Fatalf("other cluster: %v", err)
	}
}

// TestReopenKeepsDataAndServesAgain: after Reopen the log has the same
// offsets and contents, the old handle is closed, and appends continue.
func TestReopenKeepsDataAndServesAgain(t *testing.T) {
	m, err := NewLogManager(LogManagerConfig{Dirs: []string{t.TempDir()}, Defaults: DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tp := TopicPartition{Topic: "re", Partition: 0}
	l, err := m.GetOrCreate(tp, DefaultLogConfig())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := l.Append(makeBatch(t, batchSpec{n: 4, valueSize: 8}), AppendOptions{LogAppendTime: -1}); err != nil {
			t.Fatal(err)
		}
	}
	l2, err := m.Reopen(tp)
	if err != nil {
		t.Fatal(err)
	}
	if l2 == l {
		t.Fatal("Reopen returned the same Log")
	}
	if _, err := l.Append(makeBatch(t, batchSpec{n: 1, valueSize: 8}), AppendOptions{LogAppendTime: -1}); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("old log append: %v, want ErrLogClosed", err)
	}
	if got := l2.LogEndOffset(); got != 12 {
		t.Fatalf("log end offset after reopen %d, want 12", got)
	}
	info, err := l2.Append(makeBatch(t, batchSpec{n: 2, valueSize: 8}), AppendOptions{LogAppendTime: -1})
	if err != nil || info.FirstOffset != 12 {
		t.Fatalf("append after reopen: %+v %v", info, err)
	}
	if got, _ := m.Get(tp); got != l2 {
		t.Fatal("manager still hands out the old log")
	}
}
