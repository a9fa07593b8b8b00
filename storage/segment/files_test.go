package segment

import (
	"bytes"
	"errors"
	"testing"
)

// The cache keeps at most its limit of unpinned segments open, evicting
// the least recently used; a pinned one is never closed under its holder;
// an evicted one reads the same bytes once reopened.
func TestFileCacheEvictsLeastRecentlyUsedUnpinned(t *testing.T) {
	c, err := NewFileCache(2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileCache(0); err == nil {
		t.Fatal("a cache of 0 was accepted")
	}
	dir := t.TempDir()
	var segs []*Segment
	var data [][]byte
	for i := int64(0); i < 4; i++ {
		s, err := Create(dir, i*100, Config{IndexIntervalBytes: 1, MaxIndexBytes: 1 << 10, Files: c})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Release()
		b, h := batchAt(t, i*100, 3, 10)
		if err := s.Append(b, h); err != nil {
			t.Fatal(err)
		}
		segs, data = append(segs, s), append(data, b)
	}
	isOpen := func(s *Segment) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return s.open
	}
	if st := c.Stats(); st.Open != 2 || st.Evictions != 2 {
		t.Fatalf("after creating 4: %+v, want 2 open, 2 evicted", st)
	}
	if isOpen(segs[0]) || isOpen(segs[1]) || !isOpen(segs[2]) || !isOpen(segs[3]) {
		t.Fatal("the two least recently used should be closed")
	}
	f0, err := segs[0].Pin() // reopens 0, evicts 2 (least recently used)
	if err != nil {
		t.Fatal(err)
	}
	if isOpen(segs[2]) || !isOpen(segs[3]) {
		t.Fatal("pinning segment 0 should have evicted segment 2")
	}
	for _, s := range segs[1:] { // churn: each pin evicts another, never 0
		if _, err := s.Pin(); err != nil {
			t.Fatal(err)
		}
		s.Unpin()
	}
	got := make([]byte, len(data[0]))
	if _, err := f0.ReadAt(got, 0); err != nil || !bytes.Equal(got, data[0]) {
		t.Fatalf("pinned descriptor unusable after churn: %v", err)
	}
	if st := c.Stats(); st.Open > 3 {
		t.Fatalf("%+v: more than limit + pinned open", st)
	}
	segs[0].Unpin()
	if st := c.Stats(); st.Open != 2 {
		t.Fatalf("after unpin: %+v, want 2 open", st)
	}
	for i, s := range segs {
		sl, err := s.Read(s.BaseOffset(), 1<<30, 1<<20, true)
		if err != nil || sl.Len != int64(len(data[i])) {
			t.Fatalf("segment %d read %+v, %v", i, sl, err)
		}
	}
	if err := segs[1].DeleteFiles(); err != nil {
		t.Fatal(err)
	}
	if _, err := segs[1].Pin(); !errors.Is(err, ErrSegmentClosed) {
		t.Fatalf("pin of a deleted segment: %v", err)
	}
}
