package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	"gregor/storage/checkpoint"
)

// UndefinedEpoch and UndefinedEpochOffset are KIP-101's "unknown" answers
// (UNDEFINED_EPOCH = -1, UNDEFINED_EPOCH_OFFSET = -1).
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// LeaderEpochCache maps each leader epoch to the first offset written in it
// (KIP-101, KIP-279), persisted in the partition's leader-epoch-checkpoint
// file on every change. Entries have strictly increasing epochs and start
// offsets.
//
// Thread-safety: all methods are safe for concurrent use.
type LeaderEpochCache struct {
	path    string
	leo     func() int64
	mu      sync.RWMutex
	entries []checkpoint.EpochEntry
}

// newLeaderEpochCache loads path (missing = empty). leo supplies the log end
// offset for EndOffsetForEpoch.
func newLeaderEpochCache(path string, leo func() int64) (*LeaderEpochCache, error) {
	c := &LeaderEpochCache{path: path, leo: leo}
	es, err := checkpoint.ReadEpochs(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		c.entries = es
	}
	return c, nil
}

// Assign records that epoch starts at startOffset (Kafka's
// LeaderEpochFileCache.assign): a no-op when epoch is already the latest
// epoch at an equal or lower start; otherwise entries with an epoch >= epoch
// or a start offset >= startOffset are dropped first, keeping the cache
// monotonic. Errors: negative arguments; a failed checkpoint write.
func (c *LeaderEpochCache) Assign(epoch int32, startOffset int64) error {
	if epoch < 0 || startOffset < 0 {
		return fmt.Errorf("leader epoch cache: invalid entry epoch %d start offset %d", epoch, startOffset)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.entries); n > 0 {
		last := c.entries[n-1]
		if last.Epoch == epoch && last.StartOffset <= startOffset {
			return nil
		}
	}
	i := len(c.entries)
	for i > 0 && (c.entries[i-1].Epoch >= epoch || c.entries[i-1].StartOffset >= startOffset) {
		i--
	}
	c.entries = append(c.entries[:i], checkpoint.EpochEntry{Epoch: epoch, StartOffset: startOffset})
	return c.persistLocked()
}

// Latest returns the most recent epoch; ok is false when the cache is empty.
func (c *LeaderEpochCache) Latest() (epoch int32, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.entries) == 0 {
		return UndefinedEpoch, false
	}
	return c.entries[len(c.entries)-1].Epoch, true
}

// Entries returns a copy of the cache in epoch order.
func (c *LeaderEpochCache) Entries() []checkpoint.EpochEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]checkpoint.EpochEntry(nil), c.entries...)
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch (KIP-101/KIP-279): for the
// latest epoch, (epoch, log end offset); for an older epoch, the largest
// known epoch <= the requested one and the start offset of the next higher
// epoch; for an epoch below every entry, (requested epoch, first entry's
// start offset); for an epoch above every entry, for -1, or for an empty
// cache, (UndefinedEpoch, UndefinedEpochOffset).
func (c *LeaderEpochCache) EndOffsetForEpoch(epoch int32) (int32, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := len(c.entries)
	if epoch == UndefinedEpoch || n == 0 {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if c.entries[n-1].Epoch == epoch {
		return epoch, c.leo()
	}
	// hi: first entry with Epoch > epoch.
	hi := sort.Search(n, func(i int) bool { return c.entries[i].Epoch > epoch })
	if hi == n {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if hi == 0 {
		return epoch, c.entries[0].StartOffset
	}
	return c.entries[hi-1].Epoch, c.entries[hi].StartOffset
}

// truncateFromEnd drops entries whose start offset is >= endOffset (the log
// was truncated to endOffset).
func (c *LeaderEpochCache) truncateFromEnd(endOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := len(c.entries)
	for i > 0 && c.entries[i-1].StartOffset >= endOffset {
		i--
	}
	if i == len(c.entries) {
		return nil
	}
	c.entries = c.entries[:i]
	return c.persistLocked()
}

// truncateFromStart drops entries wholly below startOffset; the last entry
// starting at or below it is kept with its start moved up to startOffset.
func (c *LeaderEpochCache) truncateFromStart(startOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := sort.Search(len(c.entries), func(i int) bool { return c.entries[i].StartOffset > startOffset })
	if i == 0 || (i == 1 && c.entries[0].StartOffset == startOffset) {
		return nil
	}
	keep := c.entries[i-1]
	keep.StartOffset = startOffset
	c.entries = append([]checkpoint.EpochEntry{keep}, c.entries[i:]...)
	return c.persistLocked()
}

// clear empties the cache (TruncateFullyAndStartAt).
func (c *LeaderEpochCache) clear() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
	return c.persistLocked()
}

func (c *LeaderEpochCache) persistLocked() error {
	return checkpoint.WriteEpochs(c.path, c.entries)
}
