package storage

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestReadAcrossSegmentsMatchesBatchWalk checks Log.Read over many small
// segments against the contract evaluated batch by batch: the exact bytes
// (whole batches from the one containing offset, none with last offset >=
// upperBound, at most maxBytes unless the first alone is larger).
func TestReadAcrossSegmentsMatchesBatchWalk(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	cfg := testConfig()
	cfg.SegmentBytes = 8 << 10
	l := newTestLog(t, cfg)
	type batch struct {
		base, last int64
		data       []byte
	}
	var all []batch
	off := int64(0)
	for i := 0; i < 120; i++ {
		n := 1 + rng.Intn(5)
		b := makeBatch(t, batchSpec{n: n, valueSize: []int{5, 60, 700, 2500}[rng.Intn(4)], baseTs: 1000, tag: byte(i)})
		info, err := l.Append(b, AppendOptions{LogAppendTime: -1})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, mustRead(t, l, info.FirstOffset, 1, info.LastOffset+1))
		all = append(all, batch{base: info.FirstOffset, last: info.LastOffset, data: got})
		off = info.LastOffset + 1
	}
	if l.NumSegments() < 10 {
		t.Fatalf("%d segments: the test would not cross segment boundaries", l.NumSegments())
	}
	for k := 0; k < 2000; k++ {
		offset := rng.Int63n(off + 1)
		upper := offset + rng.Int63n(off-offset+5)
		maxBytes := []int64{0, 1, rng.Int63n(3000), rng.Int63n(20000), rng.Int63n(200000)}[rng.Intn(5)]
		var want []byte
		first := int64(-1)
		for _, b := range all {
			if b.last < offset {
				continue
			}
			if b.last >= upper || (int64(len(want)+len(b.data)) > maxBytes && len(want) > 0) {
				break
			}
			if first < 0 {
				first = b.base
			}
			want = append(want, b.data...)
		}
		fd := mustRead(t, l, offset, maxBytes, upper)
		gotFirst := fd.FirstOffset
		got := readAll(t, fd)
		if offset >= min(upper, off) {
			want, first = nil, -1
		}
		if !bytes.Equal(got, want) || gotFirst != first {
			t.Fatalf("Read(%d, max %d, ub %d): %d bytes from %d, want %d bytes from %d", offset, maxBytes, upper, len(got), gotFirst, len(want), first)
		}
	}
}

func mustRead(t *testing.T, l *Log, offset, maxBytes, upper int64) FetchData {
	t.Helper()
	fd, err := l.Read(offset, maxBytes, upper)
	if err != nil {
		t.Fatalf("Read(%d, %d, %d): %v", offset, maxBytes, upper, err)
	}
	return fd
}
