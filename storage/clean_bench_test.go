package storage

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkClean measures cleaner throughput (MB/s of .log bytes read):
// 1000 keys rewritten 20 times, ~100-byte values, 1 MiB segments.
func BenchmarkClean(b *testing.B) {
	cfg := compactConfig()
	cfg.SegmentBytes = 1 << 20
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l := openTestLog(b, filepath.Join(b.TempDir(), "bench-0"), cfg, OpenOptions{})
		for r := 0; r < 20; r++ {
			for k := 0; k < 1000; k += 10 {
				recs := make([]kvRec, 10)
				for j := range recs {
					recs[j] = kvRec{key: "key-" + strconv.Itoa(k+j), value: make([]byte, 100)}
				}
				appendKV(b, l, time.Now().UnixMilli(), -1, -1, recs...)
			}
		}
		l.SetHighWatermark(l.LogEndOffset())
		b.StartTimer()
		st, err := l.Clean(0, time.Now(), DefaultCleanerConfig())
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(st.BytesRead)
		b.StopTimer()
		l.Close()
	}
}
