package segment

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// TimeIndexEntrySize is the size of one .timeindex entry: an 8-byte
// timestamp (ms) and a 4-byte offset relative to the segment's base offset.
const TimeIndexEntrySize = 12

// timeEntry: the largest timestamp seen up to offset base+rel is ts
// (Kafka's TimeIndex).
type timeEntry struct {
	ts  int64
	rel int32
}

func decodeTimeEntry(b []byte) timeEntry {
	return timeEntry{ts: int64(binary.BigEndian.Uint64(b)), rel: int32(binary.BigEndian.Uint32(b[8:]))}
}

// TimeIndex is a segment's time index (.timeindex), read from and written
// to its memory mapping (see mappedIndex). Timestamps strictly increase.
//
// Thread-safety: one writer at a time; Lookup and Last are safe concurrently
// with the writer while the segment is pinned.
type TimeIndex struct {
	mappedIndex
	base int64
}

func newTimeIndex(path string, base int64, maxBytes int32) *TimeIndex {
	return &TimeIndex{base: base, mappedIndex: mappedIndex{path: path, entrySize: TimeIndexEntrySize, maxEntries: maxIndexEntries(maxBytes, TimeIndexEntrySize)}}
}

// loadTimeIndex: see loadOffsetIndex. The check requires non-decreasing
// timestamps and offsets inside [base, base+MaxInt32], and no entry equal
// to the one before it (Kafka appends only on a new maximum timestamp, so
// a repeated entry is the zero tail of a preallocated file). It returns
// the last entry too (loadTail needs it; ok false when empty).
func loadTimeIndex(path string, base int64, maxBytes int32) (x *TimeIndex, last timeEntry, ok bool, err error) {
	n, err := checkIndexFile(path, TimeIndexEntrySize, func(first int, data []byte) error {
		for j := 0; j < len(data)/TimeIndexEntrySize; j++ {
			i := first + j
			e := decodeTimeEntry(data[j*TimeIndexEntrySize:])
			if e.rel < 0 || (i > 0 && (e.ts < last.ts || e.rel < last.rel || e == last)) {
				return fmt.Errorf("%w: %s: entry %d (%d, %d) out of order or repeated", errIndexCorrupt, path, i, e.ts, e.rel)
			}
			last = e
		}
		return nil
	})
	if err != nil {
		return nil, timeEntry{}, false, err
	}
	x = newTimeIndex(path, base, maxBytes)
	x.n = n
	return x, last, n > 0, nil
}

func (x *TimeIndex) at(i int) timeEntry { return decodeTimeEntry(x.entry(i)) }

// Len is the number of entries.
func (x *TimeIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Full reports whether segment.index.bytes worth of entries are written,
// less one: as Kafka's TimeIndex.isFull, the last slot is kept for the
// final entry OnBecomeInactive writes.
func (x *TimeIndex) Full() bool { return x.Len() >= x.maxEntries-1 }

// Last returns the last entry as (timestamp ms, absolute offset), ok=false
// when empty or not mapped.
func (x *TimeIndex) Last() (ts, offset int64, ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.n == 0 || !x.mapped() {
		return 0, 0, false
	}
	e := x.at(x.n - 1)
	return e.ts, x.base + int64(e.rel), true
}

// MaybeAppend adds (ts, offset) when ts is larger than the last entry's
// timestamp (Kafka appends only on a new maximum). skipFull ignores the size
// limit (the final entry written when the segment becomes inactive, into
// the slot Full keeps free). The segment must be pinned and writable.
func (x *TimeIndex) MaybeAppend(ts, offset int64, skipFull bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.mapped() {
		return fmt.Errorf("time index %s: not mapped", x.path)
	}
	n := x.n
	var last timeEntry
	if n > 0 {
		if last = x.at(n - 1); ts <= last.ts {
			return nil
		}
	}
	if (!skipFull && n >= x.maxEntries-1) || len(x.data) < (n+1)*TimeIndexEntrySize {
		return nil
	}
	rel := int32(offset - x.base)
	if n > 0 && rel < last.rel {
		return fmt.Errorf("time index %s: offset %d before last entry's", x.path, offset)
	}
	var b [TimeIndexEntrySize]byte
	binary.BigEndian.PutUint64(b[0:], uint64(ts))
	binary.BigEndian.PutUint32(b[8:], uint32(rel))
	if err := x.write(n, b[:]); err != nil {
		return err
	}
	x.n++
	return nil
}

// Lookup returns the offset to start scanning from for the first record
// with timestamp >= ts: the offset of the last entry whose timestamp is < ts
// (records before it cannot qualify), or the base offset when none (or the
// index is not mapped). The segment must be pinned.
func (x *TimeIndex) Lookup(ts int64) int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.mapped() {
		return x.base
	}
	i := sort.Search(x.n, func(i int) bool { return x.at(i).ts >= ts })
	if i == 0 {
		return x.base
	}
	return x.base + int64(x.at(i-1).rel)
}

// TruncateToOffset drops entries whose offset is >= offset (the file is
// trimmed when the segment is sealed or closed).
func (x *TimeIndex) TruncateToOffset(offset int64) error {
	rel := offset - x.base
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.mapped() {
		if rel <= 0 {
			x.n = 0
			return nil
		}
		return fmt.Errorf("time index %s: not mapped", x.path)
	}
	x.n = sort.Search(x.n, func(i int) bool { return int64(x.at(i).rel) >= rel })
	return nil
}

func (x *TimeIndex) reset() error { return x.TruncateToOffset(x.base) }
