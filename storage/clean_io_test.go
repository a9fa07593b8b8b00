package storage

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// bigCompactLog fills a compacted log of m with about mb MiB over few keys
// (so the cleaned log is small), its high watermark at its end.
func bigCompactLog(t *testing.T, m *LogManager, topic string, mb int) *Log {
	t.Helper()
	cfg := compactConfig()
	cfg.SegmentBytes = 256 << 10
	l, err := m.GetOrCreate(TopicPartition{Topic: topic, Partition: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	val := []byte(strings.Repeat("v", 4000))
	ts := time.Now().UnixMilli()
	for i := 0; l.Size() < int64(mb)<<20; i++ {
		recs := make([]kvRec, 8)
		for j := range recs {
			recs[j] = kvRec{fmt.Sprintf("k%d", (i*8+j)%50), val}
		}
		appendKV(t, l, ts, -1, -1, recs...)
	}
	l.SetHighWatermark(l.LogEndOffset())
	return l
}

func newCleanManager(t *testing.T) *LogManager {
	t.Helper()
	m, err := NewLogManager(LogManagerConfig{Dirs: []string{t.TempDir()}, Defaults: testConfig()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// log.cleaner.io.max.bytes.per.second: a pass's reads plus writes take at
// least their byte count over the rate (less the limiter's 0.3 s burst);
// unthrottled (the default) the same pass is not held to it.
func TestCleanerPassThrottledToIORate(t *testing.T) {
	m := newCleanManager(t)
	l := bigCompactLog(t, m, "throttled", 3)
	const rate = 1 << 20
	cc := DefaultCleanerConfig()
	cc.MaxIOBytesPerSecond = rate
	began := time.Now()
	sts, err := m.CleanerPass(time.Now(), cc)
	took := time.Since(began)
	if err != nil || len(sts) != 1 {
		t.Fatalf("pass: %v %+v", err, sts)
	}
	st := sts[0]
	if st.BytesRead < 2<<20 || st.BytesWritten >= st.BytesRead/4 {
		t.Fatalf("unexpected pass size: read %d written %d", st.BytesRead, st.BytesWritten)
	}
	// The offset map pass reads the dirty section too (all of it here),
	// so I/O is at least 2×read + written; count only read + written.
	min := time.Duration((float64(st.BytesRead+st.BytesWritten) - rate*throttleWindow) / rate * float64(time.Second))
	if took < min {
		t.Fatalf("pass of %d read + %d written bytes at %d B/s took %v, want at least %v", st.BytesRead, st.BytesWritten, rate, took, min)
	}
	t.Logf("read %d, written %d, took %v (bound %v)", st.BytesRead, st.BytesWritten, took, min)
	if l.Size() >= st.BytesRead/2 {
		t.Fatalf("log not cleaned: size %d", l.Size())
	}
}

// A rate change reaches the pass in progress (Kafka's Throttler
// updateDesiredRatePerSec): a pass that would take ~30 s at 200 KB/s ends
// soon after the rate is lifted.
func TestCleanerIORateChangesDuringPass(t *testing.T) {
	m := newCleanManager(t)
	bigCompactLog(t, m, "slow", 3)
	cc := DefaultCleanerConfig()
	cc.MaxIOBytesPerSecond = 200 << 10
	done := make(chan error, 1)
	started := make(chan struct{})
	m.cleaner.onClean = func(TopicPartition) { close(started) }
	go func() {
		_, err := m.CleanerPass(time.Now(), cc)
		done <- err
	}()
	<-started
	time.Sleep(500 * time.Millisecond) // let the pass be throttled a while
	lifted := time.Now()
	m.SetCleanerIORate(math.MaxFloat64)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		// At most one reserved read buffer (256 KiB) at the old rate is
		// still waited out after the change.
		if d := time.Since(lifted); d > 10*time.Second {
			t.Fatalf("pass ended %v after the rate was lifted", d)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("pass still throttled 25 s after the rate was lifted")
	}
}

// AbortCleaning (shutdown) ends a throttled pass at once, the log and its
// checkpoint unchanged.
func TestAbortCleaningEndsThrottledPass(t *testing.T) {
	m := newCleanManager(t)
	l := bigCompactLog(t, m, "abort", 2)
	size := l.Size()
	cc := DefaultCleanerConfig()
	cc.MaxIOBytesPerSecond = 10 << 10
	started := make(chan struct{})
	m.cleaner.onClean = func(TopicPartition) { close(started) }
	done := make(chan []CleanStats, 1)
	go func() {
		sts, _ := m.CleanerPass(time.Now(), cc)
		done <- sts
	}()
	<-started
	m.AbortCleaning()
	select {
	case sts := <-done:
		if len(sts) != 0 || l.Size() != size {
			t.Fatalf("aborted pass cleaned: %+v, size %d → %d", sts, size, l.Size())
		}
		if _, ok := m.CleanerCheckpoint(l.TopicPartition()); ok {
			t.Fatal("aborted pass wrote a checkpoint")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("pass not aborted")
	}
	if err := m.cleaner.throttle.wait(1); !errors.Is(err, ErrCleaningAborted) {
		t.Fatalf("wait after abort: %v", err)
	}
}

// log.cleaner.threads: a pass cleans that many logs at once, never more.
func TestCleanerPassThreads(t *testing.T) {
	for _, threads := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(threads), func(t *testing.T) {
			m := newCleanManager(t)
			for i := range 3 {
				l, err := m.GetOrCreate(TopicPartition{Topic: fmt.Sprintf("t%d", i), Partition: 0}, compactConfig())
				if err != nil {
					t.Fatal(err)
				}
				fillKeys(t, l, 20, 5, time.Now().UnixMilli())
				l.SetHighWatermark(l.LogEndOffset())
			}
			// Each cleaning waits (bounded) until `threads` are in at
			// once; more than `threads` in at once is a failure.
			var mu sync.Mutex
			in, peak := 0, 0
			all := make(chan struct{})
			var once sync.Once
			m.cleaner.onClean = func(TopicPartition) {
				mu.Lock()
				in++
				peak = max(peak, in)
				if in == threads {
					once.Do(func() { close(all) })
				}
				mu.Unlock()
				select {
				case <-all:
				case <-time.After(5 * time.Second):
				}
				mu.Lock()
				in--
				mu.Unlock()
			}
			cc := DefaultCleanerConfig()
			cc.Threads = threads
			sts, err := m.CleanerPass(time.Now(), cc)
			if err != nil || len(sts) != 3 {
				t.Fatalf("pass: %v, %d cleaned", err, len(sts))
			}
			select {
			case <-all:
			default:
				t.Fatalf("never %d cleanings at once", threads)
			}
			if peak != threads {
				t.Fatalf("peak %d cleanings at once, want %d", peak, threads)
			}
			for i := range 3 {
				if _, ok := m.CleanerCheckpoint(TopicPartition{Topic: fmt.Sprintf("t%d", i), Partition: 0}); !ok {
					t.Fatalf("t%d: no checkpoint", i)
				}
			}
		})
	}
}

// log.cleaner.io.buffer.size: Kafka's split per cleaning (size / threads /
// 2), and a read buffer smaller than a batch still cleans the log right.
func TestCleanerIOBufferSize(t *testing.T) {
	for _, c := range []struct {
		size    int64
		threads int
		want    int
	}{{512 << 10, 1, 256 << 10}, {512 << 10, 4, 64 << 10}, {1000, 0, 500}, {0, 1, 16}} {
		if got := (CleanerConfig{IOBufferSize: c.size, Threads: c.threads}).bufferSize(); got != c.want {
			t.Errorf("bufferSize(%d, %d threads) = %d, want %d", c.size, c.threads, got, c.want)
		}
	}
	m := newCleanManager(t)
	l, err := m.GetOrCreate(TopicPartition{Topic: "tiny", Partition: 0}, compactConfig())
	if err != nil {
		t.Fatal(err)
	}
	fillKeys(t, l, 20, 5, time.Now().UnixMilli())
	l.SetHighWatermark(l.LogEndOffset())
	cc := DefaultCleanerConfig()
	cc.IOBufferSize = 64 // 32-byte buffers: every batch is larger
	if _, err := m.CleanerPass(time.Now(), cc); err != nil {
		t.Fatal(err)
	}
	recs, _ := readLog(t, l)
	end, _ := m.CleanerCheckpoint(l.TopicPartition())
	seen := map[string]int64{}
	for _, r := range recs {
		if r.off >= end {
			break
		}
		if prev, dup := seen[r.key]; dup {
			t.Fatalf("key %s kept at %d and %d below the cleaned end %d", r.key, prev, r.off, end)
		}
		seen[r.key] = r.off
	}
	if end == 0 || len(recs) >= 100 {
		t.Fatalf("not cleaned: end %d, %d records", end, len(recs))
	}
}
