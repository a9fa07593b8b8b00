package segment

import (
	"container/list"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"gregor/storage/record"
)

// Config is what a segment needs of the log config. Plain value.
type Config struct {
	// IndexIntervalBytes: index.interval.bytes; bytes of batches between two
	// offset index entries.
	IndexIntervalBytes int32
	// MaxIndexBytes: segment.index.bytes; bound on each index file (the
	// size the active segment's index files are preallocated to).
	MaxIndexBytes int32
	// Files bounds the open descriptors and index mappings of the segments
	// sharing it (log.segment.fd.cache.size); nil = DefaultFileCache().
	Files *FileCache
}

// Segment is one segment: its .log file, its two memory-mapped indexes and
// its aborted transaction index.
//
// Files: a segment is open (its .log descriptor and index mappings exist)
// only while pinned or kept by its FileCache; otherwise it holds no
// descriptor and no mapping, and Pin reopens it. Every method that reads or
// writes the files pins the segment for its duration; callers that keep
// the *os.File (sendfile) Pin it themselves. While the segment takes
// appends ("writable": created, or made active with Activate) its index
// files are preallocated to segment.index.bytes and mapped read-write;
// OnBecomeInactive seals it (final time index entry, index files trimmed to
// their entries, read-only mappings), as Kafka's onBecomeInactiveSegment.
//
// Thread-safety: the mutating methods (Append, Recover, TruncateTo,
// Sync, Activate, OnBecomeInactive, Rename*, Delete*, AppendAbortedTxn) must
// be serialized by the owner (the Log's writer mutex). Size, NextOffset,
// Lookup/Read methods, Pin/Unpin and Acquire/Release are safe from any
// goroutine concurrently with the writer. The segment is closed for good
// when the last reference is released.
type Segment struct {
	dir     string
	base    int64
	cfg     Config
	cache   *FileCache
	index   *OffsetIndex
	tindex  *TimeIndex
	created time.Time
	// txn is the aborted transaction index (.txnindex), whose file exists
	// only once an aborted transaction's marker landed in this segment.
	txn *TxnIndex

	// fmu guards opening and closing the files, the paths (renames) and
	// the flags below it.
	fmu      sync.Mutex
	logPath  string
	f        *os.File // the .log while open; written under fmu and cache.mu
	writable bool     // takes appends: indexes preallocated and mapped read-write
	gone     bool     // closed or files deleted: never reopened
	deleted  bool     // files deleted (DeleteFiles)
	closeErr error

	// Guarded by cache.mu.
	retired  bool // deleted or closed for good: closed at the last Unpin, never cached
	open     bool
	pins     int
	elem     *list.Element // in cache.lru while open, unpinned and not retired
	evicting bool

	// size is the committed byte length of the .log file: bytes below it
	// hold whole batches and are safe to read.
	size atomic.Int64
	// next is the offset after the last batch (base when empty).
	next atomic.Int64
	// maxTs / maxTsOffset: largest batch maxTimestamp seen and the base
	// offset of the batch carrying it (-1 / -1 when none).
	maxTs       atomic.Int64
	maxTsOffset atomic.Int64
	// firstTs is the maxTimestamp of the first batch (segment.ms roll), -1 if none.
	firstTs atomic.Int64

	bytesSinceIndex int64
	refs            atomic.Int32
	unflushed       bool
}

// ErrSegmentClosed is returned by Acquire-guarded operations once the last
// reference is gone, and (wrapped) by Pin once the files were deleted.
var ErrSegmentClosed = errors.New("segment closed")

// Create makes a new empty segment with base offset base in dir, replacing
// any files of that name. It is writable (see Segment) and open.
func Create(dir string, base int64, cfg Config) (*Segment, error) {
	return create(dir, base, cfg, "")
}

// create is Create with suffix after every file name (CreateWithSuffix).
func create(dir string, base int64, cfg Config, suffix string) (*Segment, error) {
	s := newSegment(dir, base, cfg)
	s.logPath += suffix
	s.index.path += suffix
	s.tindex.path += suffix
	s.txn.path += suffix
	s.writable = true
	f, err := os.OpenFile(s.logPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	f.Close()
	if err := os.Remove(s.txn.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	// Both index files exist from the start (empty; the offset index is
	// preallocated when mapped below, the time index on first use).
	for _, p := range []string{s.index.path, s.tindex.path} {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, fmt.Errorf("create segment: %w", err)
		}
		f.Close()
	}
	if err := s.withPin(func(*os.File) error { return nil }); err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	return s, nil
}

func newSegment(dir string, base int64, cfg Config) *Segment {
	s := &Segment{dir: dir, base: base, cfg: cfg, logPath: Path(dir, base, LogSuffix), created: time.Now(),
		cache:  cfg.Files,
		index:  newOffsetIndex(Path(dir, base, IndexSuffix), base, cfg.MaxIndexBytes),
		tindex: newTimeIndex(Path(dir, base, TimeIndexSuffix), base, cfg.MaxIndexBytes),
		txn:    &TxnIndex{path: Path(dir, base, TxnIndexSuffix)}}
	if s.cache == nil {
		s.cache = DefaultFileCache()
	}
	s.next.Store(base)
	s.maxTs.Store(record.NoTimestamp)
	s.maxTsOffset.Store(-1)
	s.firstTs.Store(record.NoTimestamp)
	s.refs.Store(1)
	return s
}

// BaseOffset is the offset of the segment's first batch (from its file name).
func (s *Segment) BaseOffset() int64 { return s.base }

// Size is the committed .log byte length.
func (s *Segment) Size() int64 { return s.size.Load() }

// NextOffset is the offset after the segment's last batch (BaseOffset when
// empty).
func (s *Segment) NextOffset() int64 { return s.next.Load() }

// MaxTimestamp is the largest batch maxTimestamp in the segment in ms, and
// the base offset of the batch carrying it; (-1, -1) when the segment holds
// no timestamped batch.
func (s *Segment) MaxTimestamp() (ts, batchOffset int64) { return s.maxTs.Load(), s.maxTsOffset.Load() }

// LastModified is the .log file's modification time (retention for segments
// without timestamps, as Kafka), from its path: no descriptor needed.
func (s *Segment) LastModified() time.Time {
	s.fmu.Lock()
	p := s.logPath
	s.fmu.Unlock()
	if fi, err := os.Stat(p); err == nil {
		return fi.ModTime()
	}
	return s.created
}

// File is the open .log file, for pread and sendfile at explicit offsets.
// Valid only while the caller holds a pin (Pin returns the same file).
func (s *Segment) File() *os.File {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	return s.f
}

// IndexFull reports that either index reached segment.index.bytes.
func (s *Segment) IndexFull() bool { return s.index.Full() || s.tindex.Full() }

// ShouldRollForTime reports whether segment.ms has passed for this segment:
// judged by the new batch's maxTimestamp against the first batch's, or by
// wall-clock age of the segment when it holds no timestamp (Kafka's
// LogSegment.shouldRoll).
func (s *Segment) ShouldRollForTime(segmentMs, batchMaxTs int64, now time.Time) bool {
	if s.Size() == 0 {
		return false
	}
	if first := s.firstTs.Load(); first >= 0 && batchMaxTs >= 0 {
		return batchMaxTs-first > segmentMs
	}
	return now.Sub(s.created).Milliseconds() > segmentMs
}

// Acquire takes a reference so the segment is not closed for good (its
// files can still be pinned); false once the segment is closed (then the
// caller must look it up again).
func (s *Segment) Acquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release drops a reference; the last one closes the files for good (a
// writable segment's index files are trimmed first, as Kafka's close).
func (s *Segment) Release() {
	if s.refs.Add(-1) == 0 {
		s.closeForGood()
	}
}

func (s *Segment) closeForGood() {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.gone = true
	s.retire()
	s.closeIfIdleLocked()
	if s.writable && !s.deleted {
		s.writable = false
		if err := s.index.trim(); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
		if err := s.tindex.trim(); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
	}
}

// retire marks the segment as never to be cached again.
func (s *Segment) retire() {
	s.cache.mu.Lock()
	s.retired = true
	s.cache.mu.Unlock()
}

// Activate makes a sealed segment take appends again (it became the
// active segment: the last one at load, or the one a truncation ends in):
// its index files are preallocated to segment.index.bytes and mapped
// read-write, as Kafka resizes the active segment's indexes. No-op when
// already writable. Errors: I/O errors.
func (s *Segment) Activate() error { return s.setWritable(true) }

// setWritable switches the index files between their read-write
// preallocated and read-only trimmed forms.
func (s *Segment) setWritable(w bool) error {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if s.writable == w {
		return nil
	}
	if s.gone {
		return errSegmentGone
	}
	s.cache.mu.Lock()
	open := s.open
	s.cache.mu.Unlock()
	s.writable = w
	if err := s.index.reshape(w, open); err != nil {
		return err
	}
	return s.tindex.reshape(w, open)
}

// Sync fsyncs the .log file and the indexes (when anything was appended
// since the last Sync). The indexes are fsynced through transient
// descriptors (their mappings hold none).
func (s *Segment) Sync() error {
	if !s.unflushed {
		return nil
	}
	err := s.withPin(func(f *os.File) error {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", f.Name(), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if err := s.index.sync(); err != nil {
		return err
	}
	if err := s.tindex.sync(); err != nil {
		return err
	}
	if err := s.txn.Sync(); err != nil {
		return err
	}
	s.unflushed = false
	return nil
}

// OnBecomeInactive seals the segment when the log rolls past it or closes,
// as Kafka's LogSegment.onBecomeInactiveSegment: the final time index entry
// (the segment's maximum timestamp, into the slot the time index keeps for
// it), then both index files trimmed to their entries and mapped
// read-only.
func (s *Segment) OnBecomeInactive() error {
	s.fmu.Lock()
	w := s.writable
	s.fmu.Unlock()
	if !w {
		return nil // already sealed
	}
	if ts, off := s.MaxTimestamp(); ts >= 0 {
		err := s.withPin(func(*os.File) error {
			ti, err := s.timeIndex()
			if err != nil {
				return err
			}
			return ti.MaybeAppend(ts, off, true)
		})
		if err != nil {
			return err
		}
		s.unflushed = true
	}
	return s.setWritable(false)
}

// Files lists the segment's current file paths (.log, .index, .timeindex,
// and .txnindex once it exists), the .log first.
func (s *Segment) Files() []string {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	fs := []string{s.logPath, s.index.path, s.tindex.path}
	if s.txn.exists {
		fs = append(fs, s.txn.path)
	}
	return fs
}

// RenameWithSuffix renames the segment's files by appending suffix (e.g.
// DeletedSuffix). Open handles and mappings keep working; a later reopen
// uses the new names.
func (s *Segment) RenameWithSuffix(suffix string) error {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	for _, p := range []*string{&s.logPath, &s.index.path, &s.tindex.path, &s.txn.path} {
		if err := os.Rename(*p, *p+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rename %s: %w", *p, err)
		}
		*p += suffix
	}
	return nil
}

// DeleteFiles unlinks the segment's files, its .txnindex with them. A
// segment nobody has pinned is closed at once; pinned ones (a read in
// flight) keep reading the unlinked inode and close at their last Unpin.
// It cannot be reopened after: Pin then fails with ErrSegmentClosed.
func (s *Segment) DeleteFiles() error {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.gone, s.deleted = true, true
	s.retire()
	var first error
	for _, p := range []string{s.logPath, s.index.path, s.tindex.path, s.txn.path} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	s.closeIfIdleLocked()
	return first
}

// AppendAbortedTxn records an aborted transaction whose ABORT marker is in
// this segment in its .txnindex (created on the first entry); an entry
// whose LastOffset is not after the last one's is already there and is
// skipped. Errors: I/O errors.
func (s *Segment) AppendAbortedTxn(e AbortedTxn) error {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if err := s.txn.Append(e); err != nil {
		return err
	}
	s.unflushed = true
	return nil
}

// CollectAbortedTxns appends the segment's aborted transactions that
// overlap [fetchOffset, upperBound) to dst; complete reports that no later
// segment can hold one (see TxnIndex.Collect).
func (s *Segment) CollectAbortedTxns(dst []AbortedTxn, fetchOffset, upperBound int64) ([]AbortedTxn, bool) {
	return s.txn.Collect(dst, fetchOffset, upperBound)
}

// AbortedTxns is a copy of the segment's .txnindex entries (tools, the cleaner).
func (s *Segment) AbortedTxns() []AbortedTxn { return s.txn.Entries() }
