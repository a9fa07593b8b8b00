// Package compaction holds the pure pieces of Kafka's log cleaner
// (cleanup.policy=compact): the key → last offset map built over the dirty
// section of a log, and the per-batch filter that keeps the latest record
// of each key, drops superseded records and expired tombstones, and
// rebuilds batches with their original offsets, timestamps and producer
// fields, and the transaction tracker that tells it which batches belong to
// aborted transactions and which markers have outlived their data. The
// storage package drives them segment by segment (Log.Clean).
package compaction

import (
	"crypto/md5"
	"errors"
	"math/bits"
)

// DefaultDedupeBufferSize is log.cleaner.dedupe.buffer.size's default,
// 128 MiB: the memory budget of one OffsetMap.
const DefaultDedupeBufferSize = 128 << 20

// DefaultLoadFactor is log.cleaner.io.buffer.load.factor's default: the map
// is "full" once this fraction of its slots is used (linear probing slows
// down sharply above it).
const DefaultLoadFactor = 0.9

// slotBytes is one entry: the 16-byte MD5 of the key and the 8-byte offset,
// as Kafka's SkimpyOffsetMap.
const slotBytes = md5.Size + 8

// ErrMapFull is returned by Put when the map already holds its maximum
// number of entries (the dirty section is larger than
// log.cleaner.dedupe.buffer.size can describe in one pass).
var ErrMapFull = errors.New("compaction: offset map full")

type slot struct {
	hash [md5.Size]byte
	off  int64 // offset+1; 0 marks an empty slot
}

// OffsetMap maps record keys to the largest offset seen for them. Like
// Kafka's SkimpyOffsetMap it stores the MD5 hash of each key (16 bytes), not
// the key, so memory is a fixed 24 bytes per slot whatever the key sizes;
// two keys with the same hash would be treated as one (the older record of
// either could then be dropped) — with a 128-bit hash this does not happen
// in practice, the trade-off Kafka makes too. Open addressing with linear
// probing over a slot array allocated once.
//
// Not safe for concurrent use: one cleaning pass owns it.
type OffsetMap struct {
	slots   []slot
	mask    uint64
	entries int
	limit   int
	latest  int64
}

// NewOffsetMap returns a map using at most memoryBytes (slots of 24 bytes,
// rounded down to a power of two, at least 16) that accepts keys until
// loadFactor (0 < loadFactor <= 1) of the slots are used.
func NewOffsetMap(memoryBytes int64, loadFactor float64) *OffsetMap {
	n := max(memoryBytes/slotBytes, 16)
	n = 1 << (63 - bits.LeadingZeros64(uint64(n))) // round down to a power of two
	if loadFactor <= 0 || loadFactor > 1 {
		loadFactor = DefaultLoadFactor
	}
	return &OffsetMap{slots: make([]slot, n), mask: uint64(n - 1), limit: max(int(float64(n)*loadFactor), 1), latest: -1}
}

// SizeFor returns the memory an OffsetMap needs to hold entries keys at
// loadFactor, capped at budget bytes: the cleaner sizes its map to the
// dirty section's offset count so small logs do not allocate the whole
// log.cleaner.dedupe.buffer.size.
func SizeFor(entries int64, loadFactor float64, budget int64) int64 {
	if loadFactor <= 0 || loadFactor > 1 {
		loadFactor = DefaultLoadFactor
	}
	need := int64(float64(entries)/loadFactor+1) * slotBytes
	n := int64(16)
	for n*slotBytes < need && n*slotBytes < budget {
		n <<= 1
	}
	return min(n*slotBytes, max(budget, 16*slotBytes))
}

// Slots is the slot count; MaxEntries the number of keys accepted.
func (m *OffsetMap) Slots() int      { return len(m.slots) }
func (m *OffsetMap) MaxEntries() int { return m.limit }

// Len is the number of distinct keys (hashes) stored.
func (m *OffsetMap) Len() int { return m.entries }

// LatestOffset is the largest offset Put so far, -1 when none.
func (m *OffsetMap) LatestOffset() int64 { return m.latest }

// Put records offset as the latest for key (keeping the larger offset if
// the key is present). Errors: ErrMapFull when key is new and the map holds
// MaxEntries keys already.
func (m *OffsetMap) Put(key []byte, offset int64) error {
	h := md5.Sum(key)
	i := m.index(&h)
	for {
		s := &m.slots[i]
		if s.off == 0 {
			if m.entries >= m.limit {
				return ErrMapFull
			}
			s.hash, s.off = h, offset+1
			m.entries++
			break
		}
		if s.hash == h {
			s.off = max(s.off, offset+1)
			break
		}
		i = (i + 1) & m.mask
	}
	m.latest = max(m.latest, offset)
	return nil
}

// Get returns the latest offset recorded for key.
func (m *OffsetMap) Get(key []byte) (offset int64, ok bool) {
	h := md5.Sum(key)
	for i := m.index(&h); ; i = (i + 1) & m.mask {
		s := &m.slots[i]
		if s.off == 0 {
			return -1, false
		}
		if s.hash == h {
			return s.off - 1, true
		}
	}
}

// Clear empties the map for reuse.
func (m *OffsetMap) Clear() {
	clear(m.slots)
	m.entries, m.latest = 0, -1
}

func (m *OffsetMap) index(h *[md5.Size]byte) uint64 {
	// The hash is uniformly distributed: its first 8 bytes are the probe start.
	v := uint64(h[0])<<56 | uint64(h[1])<<48 | uint64(h[2])<<40 | uint64(h[3])<<32 |
		uint64(h[4])<<24 | uint64(h[5])<<16 | uint64(h[6])<<8 | uint64(h[7])
	return v & m.mask
}
