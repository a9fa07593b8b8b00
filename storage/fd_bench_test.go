package storage

import (
	"path/filepath"
	"strconv"
	"testing"

	"gregor/storage/segment"
)

// BenchmarkReadColdVsWarmSegment: Log.Read of one 16 KiB batch (then
// Release) from 32 segments of 1 MiB in turn. warm: the file cache holds
// every segment, so a read is the index lookup and header preads; cold:
// a cache of 1, so every read first reopens its segment (open the .log,
// map both indexes; the previous one is closed and unmapped). The region
// handed out is the reopened *os.File either way (zero-copy unchanged).
func BenchmarkReadColdVsWarmSegment(b *testing.B) {
	for _, limit := range []int{1000, 1} {
		name := "warm"
		if limit == 1 {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			files, err := segment.NewFileCache(limit)
			if err != nil {
				b.Fatal(err)
			}
			cfg := DefaultLogConfig()
			cfg.SegmentBytes = 1 << 20
			cfg.SkipRollFsync = true
			l := openTestLog(b, filepath.Join(b.TempDir(), "bench-0"), cfg, OpenOptions{FileCache: files})
			defer l.Close()
			tmpl := benchBatch(b, 1024)
			batch := make([]byte, len(tmpl))
			for l.NumSegments() <= 32 {
				copy(batch, tmpl)
				if _, err := l.Append(batch, AppendOptions{LogAppendTime: -1, PreValidated: true}); err != nil {
					b.Fatal(err)
				}
			}
			segs := l.segs.Load().segs[:32]
			offs := make([]int64, len(segs))
			for i, s := range segs {
				offs[i] = (s.BaseOffset() + s.NextOffset()) / 2
			}
			leo := l.LogEndOffset()
			opens := files.Stats().Opens
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				fd, err := l.Read(offs[i%len(offs)], 1, leo)
				if err != nil || fd.Bytes == 0 {
					b.Fatal(err)
				}
				fd.Release()
			}
			b.ReportMetric(float64(files.Stats().Opens-opens)/float64(b.N), "reopens/op")
		})
	}
}

// BenchmarkCreatePartition: OpenLog + Close of a fresh partition (one
// empty segment: .log created, both indexes preallocated and mapped, then
// trimmed at Close) — the per-partition cost of creating partitions.
func BenchmarkCreatePartition(b *testing.B) {
	root := b.TempDir()
	cfg := DefaultLogConfig()
	for i := 0; i < b.N; i++ {
		l := openTestLog(b, filepath.Join(root, "p-"+strconv.Itoa(i)), cfg, OpenOptions{})
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
