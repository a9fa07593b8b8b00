package segment

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"sync/atomic"
)

// OffsetIndexEntrySize is the size of one .index entry: a 4-byte offset
// relative to the segment's base offset and a 4-byte .log file position.
const OffsetIndexEntrySize = 8

// OffsetIndex is a segment's sparse offset index (.index), read from and
// written to its memory mapping (see mappedIndex). Entry i says the batch at
// byte position pos holds offsets up to base+rel (Kafka's OffsetIndex).
//
// ends[i], kept in memory only, is the position just past entry i's batch
// (the next batch boundary): 0 when unknown (entries loaded from an
// existing .index file, until a read parses the batch's header and records
// it with learnEnd). It lets reads skip the header pread of the indexed
// batch. It is allocated when first needed, so a sealed segment nobody
// reads costs no memory. Readers holding the shared lock access ends[i]
// atomically (they may record it concurrently).
//
// Thread-safety: one writer (the log's writer) at a time; lookups are safe
// concurrently with the writer while the segment is pinned.
type OffsetIndex struct {
	mappedIndex
	base int64
	ends []int32
}

func newOffsetIndex(path string, base int64, maxBytes int32) *OffsetIndex {
	return &OffsetIndex{base: base, mappedIndex: mappedIndex{path: path, entrySize: OffsetIndexEntrySize, maxEntries: maxIndexEntries(maxBytes, OffsetIndexEntrySize)}}
}

// loadOffsetIndex sanity-checks an existing .index file against logSize
// (increasing offsets and positions, positions below logSize; an all-zero
// entry, which is what a preallocated file holds past its entries, is
// never valid since no batch at position 0 is indexed) and returns the
// index with its entry count; the content is not kept (it is mapped when
// the segment opens). A missing file or bad content returns an error
// wrapping fs.ErrNotExist or errIndexCorrupt and the caller rebuilds it.
func loadOffsetIndex(path string, base int64, maxBytes int32, logSize int64) (*OffsetIndex, error) {
	var prev offsetEntry
	n, err := checkIndexFile(path, OffsetIndexEntrySize, func(first int, data []byte) error {
		for j := 0; j < len(data)/OffsetIndexEntrySize; j++ {
			i := first + j
			e := decodeOffsetEntry(data[j*OffsetIndexEntrySize:])
			if e.rel < 0 || e.pos <= 0 || int64(e.pos) >= logSize ||
				(i > 0 && (e.rel <= prev.rel || e.pos <= prev.pos)) {
				return fmt.Errorf("%w: %s: entry %d (%d, %d) out of order, zero or past the log (%d bytes)", errIndexCorrupt, path, i, e.rel, e.pos, logSize)
			}
			prev = e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	x := newOffsetIndex(path, base, maxBytes)
	x.n = n
	return x, nil
}

type offsetEntry struct{ rel, pos int32 }

func decodeOffsetEntry(b []byte) offsetEntry {
	return offsetEntry{rel: int32(binary.BigEndian.Uint32(b)), pos: int32(binary.BigEndian.Uint32(b[4:]))}
}

// at returns entry i (mu held, mapped).
func (x *OffsetIndex) at(i int) offsetEntry { return decodeOffsetEntry(x.entry(i)) }

// endAt is entry i's batch end, 0 when unknown (mu held).
func (x *OffsetIndex) endAt(i int) int32 {
	if i < len(x.ends) {
		return atomic.LoadInt32(&x.ends[i])
	}
	return 0
}

// Len is the number of entries.
func (x *OffsetIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Full reports whether segment.index.bytes worth of entries are written.
func (x *OffsetIndex) Full() bool { return x.Len() >= x.maxEntries }

// Append adds an entry for a batch whose last offset is lastOffset, at
// byte position pos, size bytes long. Offsets and positions must increase.
// The segment must be pinned and writable. A full index (the mapping holds
// segment.index.bytes) takes no more entries: the log rolls before that
// when appending, but recovery or the cleaner may index a segment written
// under a larger segment.index.bytes; lookups past the last entry then
// scan more headers, which is slower but correct.
func (x *OffsetIndex) Append(lastOffset int64, pos, size int32) error {
	rel := lastOffset - x.base
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.mapped() {
		return fmt.Errorf("offset index %s: not mapped", x.path)
	}
	if x.writable && len(x.data) < (x.n+1)*OffsetIndexEntrySize {
		return nil
	}
	if n := x.n; n > 0 {
		if last := x.at(n - 1); int32(rel) <= last.rel || pos <= last.pos {
			return fmt.Errorf("offset index %s: entry (%d, %d) not after (%d, %d)", x.path, rel, pos, last.rel, last.pos)
		}
	}
	var b [OffsetIndexEntrySize]byte
	binary.BigEndian.PutUint32(b[0:], uint32(rel))
	binary.BigEndian.PutUint32(b[4:], uint32(pos))
	if err := x.write(x.n, b[:]); err != nil {
		return err
	}
	if len(x.ends) < x.n {
		x.ends = append(x.ends, make([]int32, x.n-len(x.ends))...)
	}
	x.ends = append(x.ends[:x.n], pos+size)
	x.n++
	return nil
}

// Lookup returns the position of the batch to start scanning from for
// offset: the largest entry with offset <= target, or 0 when none. The
// segment must be pinned.
func (x *OffsetIndex) Lookup(target int64) int64 {
	start, _ := x.lookupBelow(target, math.MaxInt64)
	return start
}

// search returns how many of the first n entries satisfy !f (mu held): the
// index of the first entry for which f holds, f monotone.
func (x *OffsetIndex) search(n int, f func(e offsetEntry) bool) int {
	return sort.Search(n, func(i int) bool { return f(x.at(i)) })
}

// posAt and relAt decode one field of entry i straight from the mapping
// (mu held, mapped, i < n): the lookups' binary searches probe only one.
func (x *OffsetIndex) posAt(i int) int64 {
	return int64(int32(binary.BigEndian.Uint32(x.data[i*OffsetIndexEntrySize+4:])))
}

func (x *OffsetIndex) relAt(i int) int64 {
	return int64(int32(binary.BigEndian.Uint32(x.data[i*OffsetIndexEntrySize:])))
}

// firstPosAtLeast is the index of the first of the first n entries whose
// position is >= limit (n when none); positions increase.
func (x *OffsetIndex) firstPosAtLeast(n int, limit int64) int {
	if n == 0 || x.posAt(n-1) < limit {
		return n // the common case: every entry is below the committed size
	}
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.posAt(m) >= limit {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// firstRelAbove is the index of the first of the first n entries whose
// relative offset is > rel (n when none); offsets increase.
func (x *OffsetIndex) firstRelAbove(n int, rel int64) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.relAt(m) > rel {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// lookupBelow is Lookup among the entries whose position is below limit
// (a committed .log size the caller snapshotted: the writer indexes a
// batch just before publishing the size that covers it). When the entry's
// batch ends before target and its end is known, the scan starts there.
// unknownEnd reports that start is an indexed position whose batch end is
// not known yet (the caller may record it with learnEnd). An unmapped
// index (never the case for a pinned segment) answers 0: a scan from the
// start is slow but correct.
func (x *OffsetIndex) lookupBelow(target, limit int64) (start int64, unknownEnd bool) {
	rel := target - x.base
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.mapped() {
		return 0, false
	}
	i := x.firstRelAbove(x.firstPosAtLeast(x.n, limit), rel)
	if i == 0 {
		return 0, false
	}
	e := x.at(i - 1)
	end := x.endAt(i - 1)
	if end == 0 {
		return int64(e.pos), true
	}
	if int64(e.rel) < rel && int64(end) <= limit {
		return int64(end), false
	}
	return int64(e.pos), false
}

// lastPos is the position of the last entry, 0 when empty (mu not held).
func (x *OffsetIndex) lastPos() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.n == 0 || !x.mapped() {
		return 0
	}
	return int64(x.at(x.n - 1).pos)
}

// boundaryBelow returns a batch boundary at or below pos from which to
// scan for the last boundary <= pos: the largest indexed position <= pos,
// or the end of that entry's batch when that is <= pos too (0 when no
// entry qualifies). exact is true when the answer is already the last
// boundary <= pos (the indexed batch at it ends past pos), so no scan is
// needed. A scan from a non-exact answer covers at most about
// index.interval.bytes plus one batch. unknownEnd is as for lookupBelow.
func (x *OffsetIndex) boundaryBelow(pos int64) (at int64, exact, unknownEnd bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.mapped() {
		return 0, false, false
	}
	i := x.search(x.n, func(e offsetEntry) bool { return int64(e.pos) > pos })
	if i == 0 {
		return 0, false, false
	}
	e := x.at(i - 1)
	switch end := int64(x.endAt(i - 1)); {
	case end == 0:
		return int64(e.pos), false, true
	case end > pos:
		return int64(e.pos), true, false
	default:
		return end, false, false
	}
}

// learnEnd records that the batch at the indexed position pos ends at end
// (its header was parsed), for entries loaded without it. No-op when pos
// is not an indexed position.
func (x *OffsetIndex) learnEnd(pos, end int64) {
	x.mu.RLock()
	if !x.mapped() {
		x.mu.RUnlock()
		return
	}
	i := x.search(x.n, func(e offsetEntry) bool { return int64(e.pos) >= pos })
	if i >= x.n || int64(x.at(i).pos) != pos {
		x.mu.RUnlock()
		return
	}
	if i < len(x.ends) {
		// Only over "unknown": an entry appended since (after a
		// truncation) already carries its own batch's end.
		atomic.CompareAndSwapInt32(&x.ends[i], 0, int32(end))
		x.mu.RUnlock()
		return
	}
	x.mu.RUnlock()
	// First end learned past the known ones: grow the slice (exclusive).
	x.mu.Lock()
	defer x.mu.Unlock()
	if i < x.n && len(x.ends) < x.n {
		x.ends = append(x.ends, make([]int32, x.n-len(x.ends))...)
	}
	if i < len(x.ends) && x.ends[i] == 0 && x.mapped() && int64(x.at(i).pos) == pos {
		x.ends[i] = int32(end)
	}
}

// TruncateToPos drops every entry whose position is >= pos (the log was cut
// at pos). The file keeps its length until the segment is sealed or closed
// (then it is trimmed); the dropped entries' bytes are overwritten by the
// next appends, as in Kafka.
func (x *OffsetIndex) TruncateToPos(pos int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.mapped() {
		if pos == 0 {
			x.n, x.ends = 0, x.ends[:0]
			return nil
		}
		return fmt.Errorf("offset index %s: not mapped", x.path)
	}
	i := x.search(x.n, func(e offsetEntry) bool { return int64(e.pos) >= pos })
	x.n = i
	if len(x.ends) > i {
		x.ends = x.ends[:i]
	}
	return nil
}

// reset empties the index (before a rebuild).
func (x *OffsetIndex) reset() error { return x.TruncateToPos(0) }
