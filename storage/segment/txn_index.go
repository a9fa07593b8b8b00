package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// TxnIndexEntrySize is the size of one .txnindex entry (Kafka's
// AbortedTxn.TOTAL_SIZE): version int16, producerId int64, firstOffset
// int64, lastOffset int64, lastStableOffset int64, big-endian.
const TxnIndexEntrySize = 34

// txnIndexVersion is the only entry version Kafka writes (AbortedTxn.CURRENT_VERSION).
const txnIndexVersion = 0

// AbortedTxn is one entry of a segment's aborted transaction index: the
// producer whose transaction was aborted, the offsets of its first data
// batch and of its ABORT marker (LastOffset, which lies in this segment),
// and the partition's last stable offset once the marker was written
// (Kafka's AbortedTxn; the fetch path stops searching at an entry whose
// LastStableOffset reaches its upper bound).
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// TxnIndex is a segment's aborted transaction index
// (<base>.txnindex), kept in memory and mirrored to its file by appends.
// The file is created only with the first entry (most segments of most
// topics never see an aborted transaction), as Kafka's TransactionIndex
// creates it lazily, and holds no descriptor: each append, truncation and
// fsync opens it for the moment (aborts are rare; reads use the entries in
// memory). Entries are in LastOffset order.
//
// Thread-safety: one writer at a time (the Log's writer mutex); Collect and
// Entries are safe concurrently with the writer.
type TxnIndex struct {
	mu      sync.RWMutex
	path    string // guarded by the segment's fmu (renames)
	entries []AbortedTxn
	exists  bool // the file was found or created
	dirty   bool // written since the last Sync
}

// openTxnIndex loads path when it exists. A trailing partial entry or an
// entry of an unknown version (a torn write) ends the index there: the file
// is cut back to the whole entries before it; the partition's producer-state
// rebuild re-adds what an unclean shutdown lost (see storage.Log.AppendAbortedTxn).
func openTxnIndex(path string) (*TxnIndex, error) {
	x := &TxnIndex{path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return x, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	x.exists = true
	n := 0
	for ; (n+1)*TxnIndexEntrySize <= len(data); n++ {
		e := data[n*TxnIndexEntrySize:]
		if int16(binary.BigEndian.Uint16(e)) != txnIndexVersion {
			break
		}
		a := AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
		}
		if len(x.entries) > 0 && a.LastOffset <= x.entries[len(x.entries)-1].LastOffset {
			break
		}
		x.entries = append(x.entries, a)
	}
	if n*TxnIndexEntrySize != len(data) {
		if err := os.Truncate(path, int64(n*TxnIndexEntrySize)); err != nil {
			return nil, fmt.Errorf("truncate %s: %w", path, err)
		}
	}
	return x, nil
}

// Append adds e at the end. An entry whose LastOffset is not after the
// last one's is already there (a rebuild after restart re-adds every abort
// it finds) and is skipped. Errors: I/O errors creating or writing the file.
func (x *TxnIndex) Append(e AbortedTxn) error {
	x.mu.RLock()
	n := len(x.entries)
	skip := n > 0 && x.entries[n-1].LastOffset >= e.LastOffset
	x.mu.RUnlock()
	if skip {
		return nil
	}
	flags := os.O_WRONLY
	if !x.exists {
		flags |= os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(x.path, flags, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", x.path, err)
	}
	x.exists = true
	var b [TxnIndexEntrySize]byte
	binary.BigEndian.PutUint16(b[0:], txnIndexVersion)
	binary.BigEndian.PutUint64(b[2:], uint64(e.ProducerID))
	binary.BigEndian.PutUint64(b[10:], uint64(e.FirstOffset))
	binary.BigEndian.PutUint64(b[18:], uint64(e.LastOffset))
	binary.BigEndian.PutUint64(b[26:], uint64(e.LastStableOffset))
	_, err = f.WriteAt(b[:], int64(n*TxnIndexEntrySize))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", x.path, err)
	}
	x.dirty = true
	x.mu.Lock()
	x.entries = append(x.entries, e)
	x.mu.Unlock()
	return nil
}

// Entries returns a copy of every entry, in LastOffset order.
func (x *TxnIndex) Entries() []AbortedTxn {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return append([]AbortedTxn(nil), x.entries...)
}

// Collect appends to dst the entries that overlap [fetchOffset,
// upperBound) (LastOffset >= fetchOffset and FirstOffset < upperBound) and
// reports complete once an entry's LastStableOffset reaches upperBound:
// no later segment can hold a transaction overlapping the range (Kafka's
// TransactionIndex.collectAbortedTxns).
func (x *TxnIndex) Collect(dst []AbortedTxn, fetchOffset, upperBound int64) ([]AbortedTxn, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, e := range x.entries {
		if e.LastOffset >= fetchOffset && e.FirstOffset < upperBound {
			dst = append(dst, e)
		}
		if e.LastStableOffset >= upperBound {
			return dst, true
		}
	}
	return dst, false
}

// TruncateTo drops the entries whose marker is at or above offset (log
// truncation: the marker is gone). Errors: I/O errors.
func (x *TxnIndex) TruncateTo(offset int64) error {
	x.mu.Lock()
	n := len(x.entries)
	for n > 0 && x.entries[n-1].LastOffset >= offset {
		n--
	}
	cut := n != len(x.entries)
	x.entries = x.entries[:n]
	x.mu.Unlock()
	if !cut || !x.exists {
		return nil
	}
	if err := os.Truncate(x.path, int64(n*TxnIndexEntrySize)); err != nil {
		return fmt.Errorf("truncate %s: %w", x.path, err)
	}
	x.dirty = true
	return nil
}

// Sync fsyncs the file when it changed since the last Sync, through a
// transient descriptor.
func (x *TxnIndex) Sync() error {
	if !x.exists || !x.dirty {
		return nil
	}
	f, err := os.Open(x.path)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", x.path, err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fmt.Errorf("fsync %s: %w", x.path, err)
	}
	x.dirty = false
	return nil
}
