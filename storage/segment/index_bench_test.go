package segment

import (
	"math/rand"
	"testing"
)

// BenchmarkOffsetIndexLookup: OffsetIndex.Lookup at random offsets in a
// segment of 4096 batches, each indexed (index.interval.bytes 0), so the
// binary search runs over 4095 entries of the memory-mapped .index.
func BenchmarkOffsetIndexLookup(b *testing.B) {
	s, err := Create(b.TempDir(), 0, Config{IndexIntervalBytes: 0, MaxIndexBytes: 10 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Release()
	off := int64(0)
	for i := 0; i < 4096; i++ {
		bt, h := batchAt(b, off, 2, 1000+int64(i))
		if err := s.Append(bt, h); err != nil {
			b.Fatal(err)
		}
		off += 2
	}
	if _, err := s.Pin(); err != nil {
		b.Fatal(err)
	}
	defer s.Unpin()
	rng := rand.New(rand.NewSource(1))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.index.Lookup(rng.Int63n(off)) < 0 {
			b.Fatal("negative position")
		}
	}
}
