package segment

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"gregor/storage/record"
)

// While Append publishes a batch, a reader may see its next offset before
// the size that covers it (never the other way round). In that state Read
// must still return only the batches below the old size, and none at or
// past the upper bound.
func TestReadBetweenNextAndSizePublication(t *testing.T) {
	s, err := Create(t.TempDir(), 0, Config{IndexIntervalBytes: 4096, MaxIndexBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	a, ha := batchAt(t, 0, 10, 1)
	if err := s.Append(a, ha); err != nil {
		t.Fatal(err)
	}
	sizeA := s.Size()
	b, hb := batchAt(t, 10, 10, 2)
	if err := s.Append(b, hb); err != nil {
		t.Fatal(err)
	}
	full := s.Size()
	s.size.Store(sizeA) // B's next offset is out, its size not yet
	for _, ub := range []int64{10, 20} {
		got, err := s.Read(0, ub, 1<<20, true)
		if err != nil {
			t.Fatal(err)
		}
		if got.Pos != 0 || got.Len != sizeA || got.FirstOffset != 0 {
			t.Fatalf("Read(0, %d) = %+v, want batch A only (%d bytes)", ub, got, sizeA)
		}
	}
	s.size.Store(full)
	if got, _ := s.Read(0, 20, 1<<20, true); got.Len != full {
		t.Fatalf("Read(0, 20) after publication = %+v, want both batches (%d bytes)", got, full)
	}
}

// Readers bounded by what the writer has committed (as a consumer is by
// the high watermark, which follows the appends) never get a batch at or
// past that bound, however the reads interleave with Append.
func TestConcurrentReadsStayBelowUpperBound(t *testing.T) {
	s, err := Create(t.TempDir(), 0, Config{IndexIntervalBytes: 4096, MaxIndexBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	const n = 10000
	batches := make([][]byte, n)
	headers := make([]record.Header, n)
	for i := range batches {
		batches[i], headers[i] = batchAt(t, int64(i), 1, int64(i))
	}
	var committed atomic.Int64
	var done atomic.Bool
	var failure atomic.Pointer[string]
	fail := func(msg string) { failure.CompareAndSwap(nil, &msg) }
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() && failure.Load() == nil {
				ub := committed.Load()
				got, err := s.Read(max(0, ub-3), ub, 1<<20, true)
				if err != nil {
					fail(err.Error())
					return
				}
				_ = s.walkHeaders(got.Pos, got.Pos+got.Len, func(_ int64, h record.Header) bool {
					if h.LastOffset() >= ub {
						fail(fmt.Sprintf("Read(%d, %d) returned the batch at %d", max(0, ub-3), ub, h.BaseOffset))
						return false
					}
					return true
				})
			}
		}()
	}
	for i, b := range batches {
		if err := s.Append(b, headers[i]); err != nil {
			t.Fatal(err)
		}
		committed.Store(int64(i) + 1)
	}
	done.Store(true)
	wg.Wait()
	if f := failure.Load(); f != nil {
		t.Fatal(*f)
	}
}
