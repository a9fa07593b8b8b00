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

// BenchmarkCleanTransactional is BenchmarkClean's data written by 4
// transactional producers, 10 batches per transaction, every fifth
// transaction aborted (its records go, its markers stay for the pass).
func BenchmarkCleanTransactional(b *testing.B) {
	cfg := compactConfig()
	cfg.SegmentBytes = 1 << 20
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l := openTestLog(b, filepath.Join(b.TempDir(), "bench-0"), cfg, OpenOptions{})
		w := newTxnWriter(b, l)
		n := 0
		for r := 0; r < 20; r++ {
			for k := 0; k < 1000; k += 10 {
				recs := make([]kvRec, 10)
				for j := range recs {
					recs[j] = kvRec{key: "key-" + strconv.Itoa(k+j), value: make([]byte, 100)}
				}
				pid := int64(n/10) % 4
				w.data(pid, recs...)
				if n++; n%10 == 0 {
					w.end(pid, (n/10)%5 != 0)
				}
			}
		}
		l.SetHighWatermark(l.LogEndOffset())
		b.StartTimer()
		st, err := l.Clean(0, time.Now(), DefaultCleanerConfig())
		if err != nil {
			b.Fatal(err)
		}
		if st.AbortedDropped == 0 {
			b.Fatal("no aborted record removed")
		}
		b.SetBytes(st.BytesRead)
		b.StopTimer()
		l.Close()
	}
}
