package segment

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"gregor/storage/record"
)

// ErrNeedsRecovery is returned by Open when the segment's indexes are
// missing or corrupt or its tail does not parse; the caller should Recover it.
var ErrNeedsRecovery = errors.New("segment needs recovery")

// Open opens an existing segment (after a clean shutdown, or one below the
// recovery point): the .log file as is, and both indexes sanity-checked
// (read once; they are memory-mapped when the segment is open). The next
// offset and maximum timestamp come from walking batch headers from the
// last offset index entry to the end. The segment is sealed (read-only
// indexes); the log calls Activate on its last segment.
//
// Errors: an error wrapping ErrNeedsRecovery when an index is missing or
// corrupt or the tail does not parse; the returned segment is then usable
// for Recover. Other errors are I/O errors (segment nil).
func Open(dir string, base int64, cfg Config) (*Segment, error) {
	s := newSegment(dir, base, cfg)
	fi, err := os.Stat(s.logPath)
	if err != nil {
		return nil, fmt.Errorf("open segment: %w", err)
	}
	s.created = fi.ModTime()
	size := fi.Size()
	var loadErr error
	if x, err := loadOffsetIndex(s.index.path, base, cfg.MaxIndexBytes, max(size, 1)); err == nil {
		s.index = x
	} else if !isMissingOrCorrupt(err) {
		return nil, err
	} else {
		loadErr = err
	}
	var lastTime timeEntry
	var haveTime bool
	if x, last, ok, err := loadTimeIndex(s.tindex.path, base, cfg.MaxIndexBytes); err == nil {
		s.tindex, lastTime, haveTime = x, last, ok
	} else if !isMissingOrCorrupt(err) {
		return nil, err
	} else if loadErr == nil {
		loadErr = err
	}
	if s.txn, err = openTxnIndex(s.txn.path); err != nil {
		return nil, err
	}
	if loadErr != nil {
		// Nothing to map: Recover rebuilds both indexes.
		s.index.n, s.tindex.n = 0, 0
		return s, fmt.Errorf("%w: %v", ErrNeedsRecovery, loadErr)
	}
	if haveTime {
		s.maxTs.Store(lastTime.ts)
		s.maxTsOffset.Store(base + int64(lastTime.rel))
	}
	if _, err := s.Pin(); err != nil {
		s.Release()
		return nil, err
	}
	err = s.loadTail(size)
	s.Unpin()
	if err != nil {
		return s, fmt.Errorf("%w: %v", ErrNeedsRecovery, err)
	}
	return s, nil
}

// loadTail (pinned) sets size, next offset and timestamps from the indexes
// plus a header walk from the last indexed batch to the end of the file.
func (s *Segment) loadTail(size int64) error {
	if off := s.maxTsOffset.Load(); off >= s.base+1<<31 {
		return fmt.Errorf("time index offset %d out of the segment", off)
	}
	start := s.index.lastPos()
	if size > 0 {
		err := s.walkHeaders(0, size, func(_ int64, h record.Header) bool {
			s.firstTs.Store(h.MaxTimestamp)
			return false
		})
		if err != nil {
			return err
		}
	}
	next := s.base
	err := s.walkHeaders(start, size, func(pos int64, h record.Header) bool {
		if h.BaseOffset < s.base {
			return false
		}
		next = h.NextOffset()
		if h.MaxTimestamp > s.maxTs.Load() {
			s.maxTs.Store(h.MaxTimestamp)
			s.maxTsOffset.Store(h.LastOffset())
		}
		s.bytesSinceIndex = pos + int64(h.Size()) - start
		return true
	})
	if err != nil {
		return err
	}
	if size > 0 && next == s.base {
		return fmt.Errorf("no batch found in %d bytes", size)
	}
	s.size.Store(size)
	s.next.Store(next)
	return nil
}

// RecoverResult describes a Recover. Plain value.
type RecoverResult struct {
	Batches        int   // valid batches kept
	TruncatedBytes int64 // bytes cut from the tail (0 when the segment was whole)
	// Cause is why the tail was cut (a *record.CorruptError or
	// *record.InvalidError, or a non-monotonic offset); nil when whole.
	Cause error
}

// Recover re-validates every batch of the .log file (structure, CRC-32C,
// offsets inside the segment and increasing), rebuilds both indexes, and
// truncates the file at the first batch that fails: a torn or corrupt tail.
// maxBatchBytes bounds a single batch (larger length fields count as
// corruption). The error is non-nil only for I/O failures.
//
// The indexes are rebuilt read-write (preallocated); a segment that was
// sealed is sealed again afterwards (index files trimmed).
func (s *Segment) Recover(maxBatchBytes int) (res RecoverResult, err error) {
	s.fmu.Lock()
	wasWritable := s.writable
	s.fmu.Unlock()
	if err := s.Activate(); err != nil {
		return res, err
	}
	f, err := s.Pin()
	if err != nil {
		return res, err
	}
	defer func() {
		s.Unpin()
		if !wasWritable {
			if serr := s.setWritable(false); err == nil {
				err = serr
			}
		}
	}()
	if err := s.index.reset(); err != nil {
		return res, err
	}
	if err := s.tindex.reset(); err != nil {
		return res, err
	}
	fi, err := f.Stat()
	if err != nil {
		return res, err
	}
	fileSize := fi.Size()
	s.size.Store(0)
	s.next.Store(s.base)
	s.maxTs.Store(record.NoTimestamp)
	s.maxTsOffset.Store(-1)
	s.firstTs.Store(record.NoTimestamp)
	s.bytesSinceIndex = 0

	// A buffer of the file's size, up to 1 MiB: after a kill -9 most of a
	// large broker's active segments hold a few batches.
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, fileSize), int(min(max(fileSize, 4096), 1<<20)))
	var pos int64
	var buf []byte
	prefix := make([]byte, record.LogOverhead)
	for pos < fileSize {
		if _, err := io.ReadFull(r, prefix); err != nil {
			res.Cause = &record.CorruptError{Reason: fmt.Sprintf("torn batch prefix at position %d", pos)}
			break
		}
		length := int64(int32(uint32(prefix[8])<<24 | uint32(prefix[9])<<16 | uint32(prefix[10])<<8 | uint32(prefix[11])))
		if length < record.HeaderSize-record.LogOverhead || length+record.LogOverhead > int64(maxBatchBytes) {
			res.Cause = &record.CorruptError{Reason: fmt.Sprintf("batch length %d at position %d", length, pos), Field: "batchLength", Value: length}
			break
		}
		total := int(length) + record.LogOverhead
		if cap(buf) < total {
			buf = make([]byte, total)
		}
		buf = buf[:total]
		copy(buf, prefix)
		if _, err := io.ReadFull(r, buf[record.LogOverhead:]); err != nil {
			res.Cause = &record.CorruptError{Reason: fmt.Sprintf("torn batch at position %d: %d of %d bytes present", pos, fileSize-pos, total)}
			break
		}
		h, _, verr := record.ValidateIntegrity(buf)
		if verr != nil {
			res.Cause = verr
			break
		}
		if h.BaseOffset < s.next.Load() || !s.CanHold(0, h.LastOffset()) {
			res.Cause = &record.CorruptError{Reason: fmt.Sprintf("batch offsets [%d, %d] at position %d not after %d or outside the segment", h.BaseOffset, h.LastOffset(), pos, s.next.Load()), Field: "baseOffset", Value: h.BaseOffset}
			break
		}
		if err := s.indexBatch(pos, h); err != nil {
			return res, err
		}
		res.Batches++
		pos += int64(total)
	}
	if pos < fileSize {
		res.TruncatedBytes = fileSize - pos
		if err := f.Truncate(pos); err != nil {
			return res, fmt.Errorf("truncate %s: %w", s.logPath, err)
		}
	}
	// Aborted transactions whose marker was cut with the tail go too; the
	// partition's producer-state rebuild re-adds any the crash lost.
	if err := s.txn.TruncateTo(s.next.Load()); err != nil {
		return res, err
	}
	s.unflushed = true
	return res, nil
}
