package storage

import (
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// benchBatch builds a ~16 KiB uncompressed batch of recSize-byte values.
func benchBatch(b *testing.B, recSize int) []byte {
	n := (16 << 10) / (recSize + 10)
	return makeBatch(b, batchSpec{n: n, valueSize: recSize, baseTs: time.Now().UnixMilli(), nilKeys: true})
}

// BenchmarkAppend: append MB/s of 16 KiB batches of 100 B and 1 KiB records
// into 64 MiB segments, with and without fsync of each rolled segment.
func BenchmarkAppend(b *testing.B) {
	for _, recSize := range []int{100, 1024} {
		for _, fsync := range []bool{false, true} {
			b.Run("record="+strconv.Itoa(recSize)+"B/fsyncPerRoll="+strconv.FormatBool(fsync), func(b *testing.B) {
				cfg := DefaultLogConfig()
				cfg.SegmentBytes = 64 << 20
				cfg.SkipRollFsync = !fsync
				l := openTestLog(b, filepath.Join(b.TempDir(), "bench-0"), cfg, OpenOptions{})
				defer l.Close()
				tmpl := benchBatch(b, recSize)
				batch := make([]byte, len(tmpl))
				b.SetBytes(int64(len(tmpl)))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					copy(batch, tmpl)
					if _, err := l.Append(batch, AppendOptions{LeaderEpoch: 0, LogAppendTime: -1, PreValidated: true}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkAppendValidated is BenchmarkAppend's 100 B case with full
// record validation (CRC + every record walked) on the append path.
func BenchmarkAppendValidated(b *testing.B) {
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 64 << 20
	cfg.SkipRollFsync = true
	l := openTestLog(b, filepath.Join(b.TempDir(), "bench-0"), cfg, OpenOptions{})
	defer l.Close()
	tmpl := benchBatch(b, 100)
	batch := make([]byte, len(tmpl))
	b.SetBytes(int64(len(tmpl)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(batch, tmpl)
		if _, err := l.Append(batch, AppendOptions{LogAppendTime: -1}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchLogSize is the size of the log the read and recovery benchmarks
// build: 1 GiB, or GREGOR_BENCH_LOG_MB MiB.
func benchLogSize() int64 {
	if v, err := strconv.Atoi(os.Getenv("GREGOR_BENCH_LOG_MB")); err == nil && v > 0 {
		return int64(v) << 20
	}
	return 1 << 30
}

// buildBenchLog writes benchLogSize() bytes of 16 KiB batches (1 KiB
// records) into 64 MiB segments and returns the dir and the log end offset.
func buildBenchLog(b *testing.B) (string, int64) {
	dir := filepath.Join(b.TempDir(), "bench-0")
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 64 << 20
	cfg.SkipRollFsync = true
	l := openTestLog(b, dir, cfg, OpenOptions{})
	tmpl := benchBatch(b, 1024)
	batch := make([]byte, len(tmpl))
	for l.Size() < benchLogSize() {
		copy(batch, tmpl)
		if _, err := l.Append(batch, AppendOptions{LogAppendTime: -1, PreValidated: true}); err != nil {
			b.Fatal(err)
		}
	}
	leo := l.LogEndOffset()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	return dir, leo
}

// BenchmarkReadLookup: Read (one batch: the lookup alone; and 1 MiB) at random offsets over a 1 GiB log
// in 64 MiB segments: segment binary search, offset index, header scan.
func BenchmarkReadLookup(b *testing.B) {
	dir, leo := buildBenchLog(b)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 64 << 20
	l := openTestLog(b, dir, cfg, OpenOptions{CleanShutdown: true})
	defer l.Close()
	for _, maxBytes := range []int64{1, 1 << 20} {
		b.Run("maxBytes="+strconv.FormatInt(maxBytes, 10), func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			for i := 0; i < b.N; i++ {
				fd, err := l.Read(rng.Int63n(leo), maxBytes, leo)
				if err != nil || fd.Bytes == 0 {
					b.Fatal(err)
				}
				fd.Release()
			}
		})
	}
}

// BenchmarkRecovery: open a 1 GiB log after an unclean shutdown (recovery
// point 0: every batch re-validated, indexes rebuilt). One op = one open.
func BenchmarkRecovery(b *testing.B) {
	dir, leo := buildBenchLog(b)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 64 << 20
	b.SetBytes(benchLogSize())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l := openTestLog(b, dir, cfg, OpenOptions{})
		if l.LogEndOffset() != leo {
			b.Fatalf("LEO %d, want %d", l.LogEndOffset(), leo)
		}
		b.StopTimer()
		l.Close()
		b.StartTimer()
	}
}
