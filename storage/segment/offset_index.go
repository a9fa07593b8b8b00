package segment

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sort"
	"sync"
	"sync/atomic"
)

// OffsetIndexEntrySize is the size of one .index entry: a 4-byte offset
// relative to the segment's base offset and a 4-byte .log file position.
const OffsetIndexEntrySize = 8

// offsetEntry is one offset index entry: rel is the last offset of a batch
// minus the base offset, pos the batch's byte position in the .log file
// (Kafka's OffsetIndex: the batch at pos holds offsets up to base+rel).
// end is the position just past that batch (the next batch boundary), kept
// in memory only: 0 when unknown (entries loaded from an existing .index
// file, until a read parses the batch's header and records it with
// learnEnd). It lets reads skip the header pread of the indexed batch.
// Readers holding the read lock access end atomically (they may record it
// concurrently); the writer holds the write lock.
type offsetEntry struct {
	rel int32
	pos int32
	end int32
}

// OffsetIndex is a segment's sparse offset index (.index), held in memory and
// mirrored to its file by appends.
//
// Thread-safety: one writer (the log's writer) at a time; Lookup is safe
// concurrently with the writer.
type OffsetIndex struct {
	path       string
	base       int64
	maxEntries int
	mu         sync.RWMutex
	entries    []offsetEntry
	f          *os.File
}

// openOffsetIndex opens or creates path. When load is true the existing
// content is read and sanity-checked against logSize (increasing offsets and
// positions, positions below logSize); a missing file or bad content returns
// an error wrapping errIndexCorrupt (or fs.ErrNotExist) and the caller
// rebuilds it.
func openOffsetIndex(path string, base int64, maxBytes int32, load bool, logSize int64) (*OffsetIndex, error) {
	f, data, err := openIndexFile(path, OffsetIndexEntrySize, load)
	if err != nil {
		return nil, err
	}
	idx := &OffsetIndex{path: path, base: base, maxEntries: maxIndexEntries(maxBytes, OffsetIndexEntrySize), f: f}
	idx.entries = make([]offsetEntry, len(data)/OffsetIndexEntrySize)
	for i := range idx.entries {
		e := offsetEntry{
			rel: int32(binary.BigEndian.Uint32(data[i*8:])),
			pos: int32(binary.BigEndian.Uint32(data[i*8+4:])),
		}
		if e.rel < 0 || e.pos < 0 || int64(e.pos) >= logSize ||
			(i > 0 && (e.rel <= idx.entries[i-1].rel || e.pos <= idx.entries[i-1].pos)) {
			f.Close()
			return nil, fmt.Errorf("%w: %s: entry %d (%d, %d) out of order or past the log (%d bytes)", errIndexCorrupt, path, i, e.rel, e.pos, logSize)
		}
		idx.entries[i] = e
	}
	return idx, nil
}

// Len is the number of entries.
func (x *OffsetIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.entries)
}

// Full reports whether segment.index.bytes worth of entries are written.
func (x *OffsetIndex) Full() bool { return x.Len() >= x.maxEntries }

// Append adds an entry for a batch whose last offset is lastOffset, at
// byte position pos, size bytes long. Offsets and positions must increase.
func (x *OffsetIndex) Append(lastOffset int64, pos, size int32) error {
	rel := lastOffset - x.base
	x.mu.Lock()
	defer x.mu.Unlock()
	if n := len(x.entries); n > 0 && (int32(rel) <= x.entries[n-1].rel || pos <= x.entries[n-1].pos) {
		return fmt.Errorf("offset index %s: entry (%d, %d) not after (%d, %d)", x.path, rel, pos, x.entries[n-1].rel, x.entries[n-1].pos)
	}
	var b [OffsetIndexEntrySize]byte
	binary.BigEndian.PutUint32(b[0:], uint32(rel))
	binary.BigEndian.PutUint32(b[4:], uint32(pos))
	if _, err := x.f.WriteAt(b[:], int64(len(x.entries))*OffsetIndexEntrySize); err != nil {
		return fmt.Errorf("offset index %s: %w", x.path, err)
	}
	x.entries = append(x.entries, offsetEntry{rel: int32(rel), pos: pos, end: pos + size})
	return nil
}

// Lookup returns the position of the batch to start scanning from for
// offset: the largest entry with offset <= target, or 0 when none.
func (x *OffsetIndex) Lookup(target int64) int64 {
	start, _ := x.lookupBelow(target, math.MaxInt64)
	return start
}

// lookupBelow is Lookup among the entries whose position is below limit
// (a committed .log size the caller snapshotted: the writer indexes a
// batch just before publishing the size that covers it). When the entry's
// batch ends before target and its end is known, the scan starts there.
// unknownEnd reports that start is an indexed position whose batch end is
// not known yet (the caller may record it with learnEnd).
func (x *OffsetIndex) lookupBelow(target, limit int64) (start int64, unknownEnd bool) {
	rel := target - x.base
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].pos) >= limit })
	i := sort.Search(n, func(i int) bool { return int64(x.entries[i].rel) > rel })
	if i == 0 {
		return 0, false
	}
	e := &x.entries[i-1]
	end := atomic.LoadInt32(&e.end)
	if end == 0 {
		return int64(e.pos), true
	}
	if int64(e.rel) < rel && int64(end) <= limit {
		return int64(end), false
	}
	return int64(e.pos), false
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
	i := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].pos) > pos })
	if i == 0 {
		return 0, false, false
	}
	e := &x.entries[i-1]
	switch end := int64(atomic.LoadInt32(&e.end)); {
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
	defer x.mu.RUnlock()
	i := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].pos) >= pos })
	if i < len(x.entries) && int64(x.entries[i].pos) == pos {
		// Only over "unknown": an entry appended since (after a
		// truncation) already carries its own batch's end.
		atomic.CompareAndSwapInt32(&x.entries[i].end, 0, int32(end))
	}
}

// TruncateToPos drops every entry whose position is >= pos (the log was cut
// at pos).
func (x *OffsetIndex) TruncateToPos(pos int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	i := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].pos) >= pos })
	x.entries = x.entries[:i]
	return x.f.Truncate(int64(i) * OffsetIndexEntrySize)
}

// reset empties the index (before a rebuild).
func (x *OffsetIndex) reset() error { return x.TruncateToPos(0) }

// Sync fsyncs the index file.
func (x *OffsetIndex) Sync() error { return x.f.Sync() }

// Close closes the index file.
func (x *OffsetIndex) Close() error { return x.f.Close() }
