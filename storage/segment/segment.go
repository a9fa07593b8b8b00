package segment

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"gregor/storage/record"
)

// Config is what a segment needs of the log config. Plain value.
type Config struct {
	// IndexIntervalBytes: index.interval.bytes; bytes of batches between two
	// offset index entries.
	IndexIntervalBytes int32
	// MaxIndexBytes: segment.index.bytes; bound on each index file.
	MaxIndexBytes int32
}

// Segment is one segment: its .log file and its two indexes.
//
// Thread-safety: the mutating methods (Append, Recover, TruncateTo,
// Sync, OnBecomeInactive, Rename*, Delete) must be serialized by the owner
// (the Log's writer mutex). Size, NextOffset, Lookup/Read methods and
// Acquire/Release are safe from any goroutine concurrently with the writer.
// The files stay open until the last reference is released.
type Segment struct {
	dir     string
	base    int64
	cfg     Config
	log     *os.File
	logPath string
	index   *OffsetIndex
	tindex  *TimeIndex
	// txn is the aborted transaction index (.txnindex), whose file exists
	// only once an aborted transaction's marker landed in this segment.
	txn     *TxnIndex
	created time.Time

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
	closeErr        error
	unflushed       bool
}

// ErrSegmentClosed is returned by Acquire-guarded operations once the last
// reference is gone.
var ErrSegmentClosed = errors.New("segment closed")

// Create makes a new empty segment with base offset base in dir, replacing
// any files of that name.
func Create(dir string, base int64, cfg Config) (*Segment, error) {
	s := newSegment(dir, base, cfg)
	f, err := os.OpenFile(s.logPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	s.log = f
	if err := os.Remove(s.txn.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		f.Close()
		return nil, fmt.Errorf("create segment: %w", err)
	}
	if s.index, err = openOffsetIndex(Path(dir, base, IndexSuffix), base, cfg.MaxIndexBytes, false, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("create segment: %w", err)
	}
	if s.tindex, err = openTimeIndex(Path(dir, base, TimeIndexSuffix), base, cfg.MaxIndexBytes, false); err != nil {
		f.Close()
		s.index.Close()
		return nil, fmt.Errorf("create segment: %w", err)
	}
	return s, nil
}

func newSegment(dir string, base int64, cfg Config) *Segment {
	s := &Segment{dir: dir, base: base, cfg: cfg, logPath: Path(dir, base, LogSuffix), created: time.Now(),
		txn: &TxnIndex{path: Path(dir, base, TxnIndexSuffix)}}
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
// without timestamps, as Kafka).
func (s *Segment) LastModified() time.Time {
	if fi, err := s.log.Stat(); err == nil {
		return fi.ModTime()
	}
	return s.created
}

// File is the open .log file, for pread and sendfile at explicit offsets.
// Valid while the caller holds a reference.
func (s *Segment) File() *os.File { return s.log }

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

// Acquire takes a reference so the files stay open; false once the segment
// is closed (then the caller must look it up again).
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

// Release drops a reference; the last one closes the files.
func (s *Segment) Release() {
	if s.refs.Add(-1) == 0 {
		s.closeFiles()
	}
}

func (s *Segment) closeFiles() {
	err := s.log.Close()
	if e := s.index.Close(); err == nil {
		err = e
	}
	if e := s.tindex.Close(); err == nil {
		err = e
	}
	if e := s.txn.Close(); err == nil {
		err = e
	}
	s.closeErr = err
}

// Sync fsyncs the .log file and both indexes (when anything was appended
// since the last Sync).
func (s *Segment) Sync() error {
	if !s.unflushed {
		return nil
	}
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", s.logPath, err)
	}
	if err := s.index.Sync(); err != nil {
		return err
	}
	if err := s.tindex.Sync(); err != nil {
		return err
	}
	if err := s.txn.Sync(); err != nil {
		return err
	}
	s.unflushed = false
	return nil
}

// OnBecomeInactive writes the final time index entry (the segment's
// maximum timestamp, skipping the size check) when the log rolls past this
// segment or closes, as Kafka's LogSegment.onBecomeInactiveSegment.
func (s *Segment) OnBecomeInactive() error {
	if ts, off := s.MaxTimestamp(); ts >= 0 {
		s.unflushed = true
		return s.tindex.MaybeAppend(ts, off, true)
	}
	return nil
}

// Files lists the segment's current file paths (.log, .index, .timeindex,
// and .txnindex once it exists), the .log first.
func (s *Segment) Files() []string {
	fs := []string{s.logPath, s.index.path, s.tindex.path}
	if s.txn.exists() {
		fs = append(fs, s.txn.path)
	}
	return fs
}

// RenameWithSuffix renames the segment's files by appending suffix (e.g.
// DeletedSuffix). Open handles keep working.
func (s *Segment) RenameWithSuffix(suffix string) error {
	for _, p := range []*string{&s.logPath, &s.index.path, &s.tindex.path, &s.txn.path} {
		if err := os.Rename(*p, *p+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rename %s: %w", *p, err)
		}
		*p += suffix
	}
	return nil
}

// DeleteFiles unlinks the segment's files, its .txnindex with them
// (readers holding references keep reading the unlinked inode until they
// release).
func (s *Segment) DeleteFiles() error {
	var first error
	for _, p := range append(s.Files()[:3], s.txn.path) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	return first
}

// AppendAbortedTxn records an aborted transaction whose ABORT marker is in
// this segment in its .txnindex (created on the first entry); an entry
// whose LastOffset is not after the last one's is already there and is
// skipped. Errors: I/O errors.
func (s *Segment) AppendAbortedTxn(e AbortedTxn) error {
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
