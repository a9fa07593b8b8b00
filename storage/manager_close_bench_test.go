package storage

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkLogManagerClose: a clean shutdown of 2,000 logs holding one
// unflushed record each (the flush of every log's active segment is
// what a broker leading many partitions waits for).
func BenchmarkLogManagerClose(b *testing.B) {
	const logs = 2000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m := logsOfOneRecord(b, b.TempDir(), logs)
		b.StartTimer()
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLogManagerOpenUnclean: opening 2,000 logs of one record each
// after a kill -9 (the files as the page cache held them: no clean
// shutdown marker, preallocated active indexes, recovery points of the
// last checkpoint), one recovery thread.
func BenchmarkLogManagerOpenUnclean(b *testing.B) {
	const logs = 2000
	src := b.TempDir()
	m := logsOfOneRecord(b, src, logs)
	if err := m.Checkpoint(); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dst := filepath.Join(b.TempDir(), "copy")
		if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
		os.Remove(filepath.Join(dst, lockFile))
		b.StartTimer()
		m2, err := NewLogManager(LogManagerConfig{Dirs: []string{dst}, Defaults: testConfig(), RecoveryThreadsPerDir: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if n := len(m2.All()); n != logs {
			b.Fatalf("%d logs", n)
		}
		m2.Close()
	}
	m.Close()
}

// logsOfOneRecord is a manager over dir (one recovery thread) holding n
// logs of 100-partition topics with one unflushed record each.
func logsOfOneRecord(b *testing.B, dir string, n int) *LogManager {
	b.Helper()
	m, err := NewLogManager(LogManagerConfig{Dirs: []string{dir}, Defaults: testConfig(), RecoveryThreadsPerDir: 1})
	if err != nil {
		b.Fatal(err)
	}
	for p := int32(0); p < int32(n); p++ {
		l, err := m.GetOrCreate(TopicPartition{fmt.Sprintf("t%d", p/100), p % 100}, testConfig())
		if err != nil {
			b.Fatal(err)
		}
		appendN(b, l, 1, 1, 10, 0)
	}
	return m
}
