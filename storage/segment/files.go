package segment

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// FileCache bounds how many segments have their files open at once, across
// every log that shares it (one per broker). A segment that is "open" holds
// exactly one descriptor, its .log, plus memory mappings of its two indexes
// (mapping keeps no descriptor); a closed segment holds nothing. Segments are
// opened on demand by Pin and closed again, least recently used first, when
// more than Limit are open and not pinned. Kafka keeps every segment's .log
// open for the life of the broker (one descriptor per segment, so brokers
// need ulimits in the hundreds of thousands); this cache keeps a broker with
// many partitions inside a fixed budget instead (log.segment.fd.cache.size).
//
// Pinned segments are never closed: a read that hands a segment's *os.File
// to sendfile holds a pin until the bytes are sent, so the open count may
// exceed Limit by the number of segments pinned at that moment.
//
// Thread-safety: safe for concurrent use.
type FileCache struct {
	limit int

	mu       sync.Mutex
	lru      list.List // *Segment: open, unpinned, not retired; most recently used at the front
	open     int       // open segments (pinned, in lru, or being evicted)
	evicting int       // of open: taken off the lru to be closed

	opens, evictions atomic.Int64
}

// FileCacheStats is a snapshot of a FileCache. Plain value.
type FileCacheStats struct {
	Limit     int   // the bound on open unpinned segments
	Open      int   // segments with their files open now (each holds one descriptor)
	Opens     int64 // times a segment's files were opened (a cold Pin, Create, Open)
	Evictions int64 // times an idle segment was closed to stay within Limit
}

// minFileCacheLimit is the smallest automatic limit.
const minFileCacheLimit = 64

// NewFileCache makes a cache that keeps at most limit segments open beyond
// those pinned. Errors: limit < 1.
func NewFileCache(limit int) (*FileCache, error) {
	if limit < 1 {
		return nil, fmt.Errorf("segment file cache size %d: must be at least 1", limit)
	}
	return &FileCache{limit: limit}, nil
}

// AutoFileCacheLimit is the default cache size (log.segment.fd.cache.size
// = -1): half of the process's open-file limit (RLIMIT_NOFILE soft limit,
// which the Go runtime raises to the hard limit at start), at least 64. The
// other half stays for sockets, transient index opens and everything else;
// under a 20,000 open-file limit this is 10,000, so a broker with 20,000
// idle partitions stays inside it.
func AutoFileCacheLimit() int {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil || r.Cur == unix.RLIM_INFINITY || r.Cur > 1<<40 {
		return 1 << 20
	}
	return max(int(r.Cur/2), minFileCacheLimit)
}

var (
	defaultCacheOnce sync.Once
	defaultCache     *FileCache
)

// DefaultFileCache is the process-wide cache used by segments whose Config
// names none (tools and tests that open logs without a LogManager), sized
// by AutoFileCacheLimit.
func DefaultFileCache() *FileCache {
	defaultCacheOnce.Do(func() { defaultCache = &FileCache{limit: AutoFileCacheLimit()} })
	return defaultCache
}

// Limit is the configured bound.
func (c *FileCache) Limit() int { return c.limit }

// Stats returns current counts.
func (c *FileCache) Stats() FileCacheStats {
	c.mu.Lock()
	n := c.open
	c.mu.Unlock()
	return FileCacheStats{Limit: c.limit, Open: n, Opens: c.opens.Load(), Evictions: c.evictions.Load()}
}

// overflowLocked takes least recently used idle segments off the lru while
// more than limit would stay open, marking them for eviction; the caller
// evicts them after dropping every lock.
func (c *FileCache) overflowLocked() []*Segment {
	var out []*Segment
	for c.open-c.evicting > c.limit {
		e := c.lru.Back()
		if e == nil {
			break
		}
		v := e.Value.(*Segment)
		c.lru.Remove(e)
		v.elem = nil
		v.evicting = true
		c.evicting++
		out = append(out, v)
	}
	return out
}

func evictAll(vs []*Segment) {
	for _, v := range vs {
		v.evict()
	}
}

// errSegmentGone is wrapped by Pin's error once the segment's files were
// deleted or it was closed.
var errSegmentGone = fmt.Errorf("%w: files deleted or closed", ErrSegmentClosed)

// Pin makes sure the segment's files are open (reopening the .log and
// remapping the indexes if the cache closed them) and keeps them open until
// the matching Unpin. The returned file is valid until then; use it only
// at explicit offsets (ReadAt, WriteAt, sendfile with an offset). Pins nest.
// The caller must hold a reference (Acquire, or be the owner).
//
// Errors: one wrapping ErrSegmentClosed when the files were deleted or the
// segment closed (a reader should take a new segment list); I/O errors
// opening or mapping the files (e.g. EMFILE).
func (s *Segment) Pin() (*os.File, error) {
	c := s.cache
	c.mu.Lock()
	if s.open {
		s.pinLocked()
		c.mu.Unlock()
		return s.f, nil
	}
	c.mu.Unlock()

	s.fmu.Lock()
	c.mu.Lock()
	if s.open { // opened meanwhile
		s.pinLocked()
		c.mu.Unlock()
		s.fmu.Unlock()
		return s.f, nil
	}
	c.mu.Unlock()
	if s.gone {
		s.fmu.Unlock()
		return nil, errSegmentGone
	}
	if err := s.openFilesLocked(); err != nil {
		s.fmu.Unlock()
		return nil, err
	}
	c.mu.Lock()
	s.open = true
	c.open++
	s.pinLocked()
	victims := c.overflowLocked()
	c.mu.Unlock()
	s.fmu.Unlock()
	c.opens.Add(1)
	evictAll(victims)
	return s.f, nil
}

// pinLocked (c.mu held, s.open) takes a pin off an idle or evicting segment.
func (s *Segment) pinLocked() {
	s.pins++
	s.leaveIdleLocked()
}

// leaveIdleLocked (c.mu held) takes s off the LRU list and out of the
// evicting count, if it was on them.
func (s *Segment) leaveIdleLocked() {
	c := s.cache
	if s.elem != nil {
		c.lru.Remove(s.elem)
		s.elem = nil
	}
	if s.evicting {
		s.evicting = false
		c.evicting--
	}
}

// Unpin drops a pin taken by Pin. An unpinned segment goes to the front of
// the cache (least recently used ones beyond the limit are closed); one
// whose files were deleted is closed at once.
func (s *Segment) Unpin() {
	c := s.cache
	c.mu.Lock()
	s.pins--
	if s.pins > 0 || !s.open {
		c.mu.Unlock()
		return
	}
	if !s.retired {
		s.elem = c.lru.PushFront(s)
		victims := c.overflowLocked()
		c.mu.Unlock()
		evictAll(victims)
		return
	}
	c.mu.Unlock()
	s.fmu.Lock()
	s.closeIfIdleLocked()
	s.fmu.Unlock()
}

// evict closes a segment the cache chose, unless it was pinned again since.
func (s *Segment) evict() {
	c := s.cache
	s.fmu.Lock()
	defer s.fmu.Unlock()
	c.mu.Lock()
	if !s.evicting {
		c.mu.Unlock()
		return
	}
	s.evicting = false
	c.evicting--
	c.mu.Unlock()
	if s.closeIfIdleLocked() {
		c.evictions.Add(1)
	}
}

// closeIfIdleLocked (s.fmu held) closes the files when open and unpinned;
// it reports whether it did.
func (s *Segment) closeIfIdleLocked() bool {
	c := s.cache
	c.mu.Lock()
	if !s.open || s.pins > 0 {
		c.mu.Unlock()
		return false
	}
	s.leaveIdleLocked()
	s.open = false
	c.open--
	c.mu.Unlock()
	s.closeErr = s.closeFilesLocked()
	return true
}

// openFilesLocked (s.fmu held, not open) opens the .log and maps the
// offset index: read-write and preallocated to segment.index.bytes while the
// segment takes appends, read-only and exactly as long as their entries
// once sealed.
func (s *Segment) openFilesLocked() error {
	f, err := os.OpenFile(s.logPath, os.O_RDWR, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("open segment %s: %w", s.logPath, errors.Join(err, errSegmentGone))
		}
		return fmt.Errorf("open segment: %w", err)
	}
	if err := s.index.mapFile(s.writable); err != nil {
		f.Close()
		return err
	}
	// The time index is mapped on first use (timeIndex): fetches never
	// need it, so a cold read costs one mapping, not two.
	s.f = f
	return nil
}

// timeIndex (pinned) returns the time index, mapping it first if this
// opening of the segment has not yet.
func (s *Segment) timeIndex() (*TimeIndex, error) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if err := s.tindex.mapFile(s.writable); err != nil { // no-op once mapped
		return nil, err
	}
	return s.tindex, nil
}

// closeFilesLocked (s.fmu held, no pins) closes the .log and unmaps the
// indexes.
func (s *Segment) closeFilesLocked() error {
	err := s.index.unmap()
	if e := s.tindex.unmap(); err == nil {
		err = e
	}
	if s.f != nil {
		if e := s.f.Close(); err == nil {
			err = e
		}
		s.f = nil
	}
	return err
}

// withPin runs fn with the segment pinned.
func (s *Segment) withPin(fn func(f *os.File) error) error {
	f, err := s.Pin()
	if err != nil {
		return err
	}
	defer s.Unpin()
	return fn(f)
}
