package segment

import (
	"bytes"
	"math/rand"
	"testing"

	"gregor/storage/record"
)

// refBatch is one batch of a test segment as the reference model sees it.
type refBatch struct {
	pos, size int64
	base      int64
	last      int64
}

// refRead is the Read contract evaluated by walking every batch: start at
// the batch containing offset, stop before a batch whose last offset is >=
// upperBound or that would take the total past maxBytes (unless it is the
// first and minOne is set).
func refRead(bs []refBatch, offset, upperBound, maxBytes int64, minOne bool) Slice {
	out := Slice{FirstOffset: -1}
	i := 0
	for i < len(bs) && bs[i].last < offset {
		i++
	}
	if i == len(bs) {
		return out
	}
	out.Pos = bs[i].pos
	for ; i < len(bs); i++ {
		b := bs[i]
		if b.last >= upperBound || (out.Len+b.size > maxBytes && !(minOne && out.Len == 0)) {
			out.Stopped = true
			break
		}
		if out.Len == 0 {
			out.FirstOffset = b.base
		}
		out.Len += b.size
	}
	if out.Len == 0 {
		out.Pos = 0
	}
	return out
}

// buildRandomSegment appends n batches of random record counts and value
// sizes (so some batches are far smaller and some larger than the index
// interval and the header scan chunk). With reopen, the segment is closed
// and reopened half way, so the first half's index entries come from the
// .index file (batch ends unknown) and the second half's from appends.
func buildRandomSegment(t *testing.T, rng *rand.Rand, cfg Config, n int, reopen bool) (*Segment, []refBatch) {
	t.Helper()
	dir := t.TempDir()
	s, err := Create(dir, 1000, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var bs []refBatch
	off := int64(1000)
	for i := 0; i < n; i++ {
		if reopen && i == n/2 {
			if err := s.OnBecomeInactive(); err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			s.Release()
			if s, err = Open(dir, 1000, cfg); err != nil {
				t.Fatal(err)
			}
			if err := s.Activate(); err != nil { // as the log does with its last segment
				t.Fatal(err)
			}
		}
		recs := make([]record.BatchRecord, 1+rng.Intn(6))
		valSize := []int{1, 20, 300, 3000, 12000}[rng.Intn(5)]
		for j := range recs {
			recs[j] = record.BatchRecord{Value: bytes.Repeat([]byte{byte(j)}, valSize), TimestampDelta: int64(j)}
		}
		b, err := record.BuildBatch(record.BatchOptions{BaseOffset: off, PartitionLeaderEpoch: -1, BaseTimestamp: 1}, recs)
		if err != nil {
			t.Fatal(err)
		}
		h, _, err := record.Validate(b)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, refBatch{pos: s.Size(), size: int64(len(b)), base: off, last: h.LastOffset()})
		if err := s.Append(b, h); err != nil {
			t.Fatal(err)
		}
		// Gaps between batches, as compaction leaves.
		off = h.LastOffset() + 1 + int64(rng.Intn(3))
	}
	t.Cleanup(s.Release)
	return s, bs
}

// TestReadMatchesBatchWalk checks Read, which finds its ends from the
// offset index, against a walk over every batch for random offsets, upper
// bounds and byte limits, with sparse and dense indexes, built by appends
// or partly loaded from the .index file.
func TestReadMatchesBatchWalk(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for k := 0; k < 8; k++ {
		interval, reopen := []int32{0, 100, 4096, 64 << 10}[k%4], k >= 4
		s, bs := buildRandomSegment(t, rng, Config{IndexIntervalBytes: interval, MaxIndexBytes: 1 << 20}, 300, reopen)
		if interval == 4096 && s.index.Len() < 10 {
			t.Fatalf("only %d index entries: the test would not exercise the index", s.index.Len())
		}
		next := s.NextOffset()
		for k := 0; k < 3000; k++ {
			offset := 1000 + rng.Int63n(next-1000+1)
			upper := offset + rng.Int63n(next-offset+20)
			maxBytes := []int64{0, 1, rng.Int63n(100), rng.Int63n(5000), rng.Int63n(60000), rng.Int63n(s.Size() + 10), 1 << 40}[rng.Intn(7)]
			minOne := rng.Intn(2) == 0
			got, err := s.Read(offset, upper, maxBytes, minOne)
			want := refRead(bs, offset, upper, maxBytes, minOne)
			if got.Len == 0 {
				got.Pos = 0
			}
			if err != nil || got != want {
				t.Fatalf("interval %d reopened %v: Read(%d, ub %d, max %d, minOne %v) = %+v, %v; want %+v",
					interval, reopen, offset, upper, maxBytes, minOne, got, err, want)
			}
		}
	}
}

// TestReadDoesNotWalkTheRange: the batches strictly between the two ends of
// a read are never parsed (no per-batch pread): clobbering their headers
// leaves the answer unchanged, while Find of an offset inside them notices.
func TestReadDoesNotWalkTheRange(t *testing.T) {
	s, err := Create(t.TempDir(), 0, Config{IndexIntervalBytes: 4096, MaxIndexBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var pos []int64
	for i := int64(0); i < 200; i++ {
		b, h := batchAt(t, i*3, 3, 1) // ~400-byte batches: ~10 per index interval
		pos = append(pos, s.Size())
		if err := s.Append(b, h); err != nil {
			t.Fatal(err)
		}
	}
	pos = append(pos, s.Size())
	// 16 batches in the middle of [batch 20, batch 180) get a broken magic byte.
	for i := 90; i < 106; i++ {
		if _, err := s.File().WriteAt([]byte{9}, pos[i]+record.OffMagic); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Read(20*3+1, 180*3, pos[180]-pos[20]+50, true)
	if err != nil || got.Pos != pos[20] || got.Len != pos[180]-pos[20] || got.FirstOffset != 60 || !got.Stopped {
		t.Fatalf("Read = %+v, %v; want [%d, %d) from 60, stopped", got, err, pos[20], pos[180])
	}
	if _, _, _, err := s.Find(95*3, s.Size()); !record.IsCorrupt(err) {
		t.Fatalf("Find inside the clobbered batches: %v, want a CorruptError", err)
	}
}
