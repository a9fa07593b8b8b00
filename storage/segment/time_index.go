package segment

import (
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"sync"
)

// TimeIndexEntrySize is the size of one .timeindex entry: an 8-byte
// timestamp (ms) and a 4-byte offset relative to the segment's base offset.
const TimeIndexEntrySize = 12

// timeEntry: every record at an offset > base+rel has a timestamp > ts is
// NOT implied; the entry says the largest timestamp seen up to offset
// base+rel is ts (Kafka's TimeIndex).
type timeEntry struct {
	ts  int64
	rel int32
}

// TimeIndex is a segment's time index (.timeindex), held in memory and
// mirrored to its file by appends. Timestamps strictly increase.
//
// Thread-safety: one writer at a time; Lookup and Last are safe concurrently
// with the writer.
type TimeIndex struct {
	path       string
	base       int64
	maxEntries int
	mu         sync.RWMutex
	entries    []timeEntry
	f          *os.File
}

// openTimeIndex: see openOffsetIndex. The check requires non-decreasing
// timestamps and offsets inside [base, base+MaxInt32].
func openTimeIndex(path string, base int64, maxBytes int32, load bool) (*TimeIndex, error) {
	f, data, err := openIndexFile(path, TimeIndexEntrySize, load)
	if err != nil {
		return nil, err
	}
	idx := &TimeIndex{path: path, base: base, maxEntries: maxIndexEntries(maxBytes, TimeIndexEntrySize), f: f}
	idx.entries = make([]timeEntry, len(data)/TimeIndexEntrySize)
	for i := range idx.entries {
		e := timeEntry{
			ts:  int64(binary.BigEndian.Uint64(data[i*12:])),
			rel: int32(binary.BigEndian.Uint32(data[i*12+8:])),
		}
		if e.rel < 0 || (i > 0 && (e.ts < idx.entries[i-1].ts || e.rel < idx.entries[i-1].rel)) {
			f.Close()
			return nil, fmt.Errorf("%w: %s: entry %d (%d, %d) out of order", errIndexCorrupt, path, i, e.ts, e.rel)
		}
		idx.entries[i] = e
	}
	return idx, nil
}

// Len is the number of entries.
func (x *TimeIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.entries)
}

// Full reports whether segment.index.bytes worth of entries are written.
func (x *TimeIndex) Full() bool { return x.Len() >= x.maxEntries }

// Last returns the last entry as (timestamp ms, absolute offset), ok=false
// when empty.
func (x *TimeIndex) Last() (ts, offset int64, ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.entries) == 0 {
		return 0, 0, false
	}
	e := x.entries[len(x.entries)-1]
	return e.ts, x.base + int64(e.rel), true
}

// MaybeAppend adds (ts, offset) when ts is larger than the last entry's
// timestamp (Kafka appends only on a new maximum). skipFull ignores the size
// limit (the final entry written when the segment becomes inactive).
func (x *TimeIndex) MaybeAppend(ts, offset int64, skipFull bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := len(x.entries)
	if n > 0 && ts <= x.entries[n-1].ts {
		return nil
	}
	if !skipFull && n >= x.maxEntries {
		return nil
	}
	rel := int32(offset - x.base)
	if n > 0 && rel < x.entries[n-1].rel {
		return fmt.Errorf("time index %s: offset %d before last entry's", x.path, offset)
	}
	var b [TimeIndexEntrySize]byte
	binary.BigEndian.PutUint64(b[0:], uint64(ts))
	binary.BigEndian.PutUint32(b[8:], uint32(rel))
	if _, err := x.f.WriteAt(b[:], int64(n)*TimeIndexEntrySize); err != nil {
		return fmt.Errorf("time index %s: %w", x.path, err)
	}
	x.entries = append(x.entries, timeEntry{ts: ts, rel: rel})
	return nil
}

// Lookup returns the offset to start scanning from for the first record
// with timestamp >= ts: the offset of the last entry whose timestamp is < ts
// (records before it cannot qualify), or the base offset when none.
func (x *TimeIndex) Lookup(ts int64) int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].ts >= ts })
	if i == 0 {
		return x.base
	}
	return x.base + int64(x.entries[i-1].rel)
}

// TruncateToOffset drops entries whose offset is >= offset.
func (x *TimeIndex) TruncateToOffset(offset int64) error {
	rel := offset - x.base
	x.mu.Lock()
	defer x.mu.Unlock()
	i := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].rel) >= rel })
	x.entries = x.entries[:i]
	return x.f.Truncate(int64(i) * TimeIndexEntrySize)
}

func (x *TimeIndex) reset() error { return x.TruncateToOffset(x.base) }

// Sync fsyncs the index file.
func (x *TimeIndex) Sync() error { return x.f.Sync() }

// Close closes the index file.
func (x *TimeIndex) Close() error { return x.f.Close() }
