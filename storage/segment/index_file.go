package segment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

var errIndexCorrupt = errors.New("corrupt index")

// isMissingOrCorrupt reports whether an index open error means "rebuild it".
func isMissingOrCorrupt(err error) bool {
	return errors.Is(err, errIndexCorrupt) || errors.Is(err, fs.ErrNotExist)
}

// maxIndexEntries is how many entrySize-byte entries fit in
// segment.index.bytes (maxBytes), at least one.
func maxIndexEntries(maxBytes int32, entrySize int) int {
	n := int(maxBytes) / entrySize
	if n < 1 {
		n = 1
	}
	return n
}

// mappedIndex is the file side of an index of fixed-size entries, memory
// mapped as Kafka's AbstractIndex: while its segment takes appends the file
// is preallocated to segment.index.bytes (rounded down to whole entries,
// sparse) and mapped read-write; once sealed it is trimmed to its entries
// and mapped read-only. Mapping holds no descriptor: the file is opened,
// mapped and closed again. The mapping exists only while the segment is
// open (see FileCache); n, the entry count, is kept across closes.
//
// Locking: mu guards data and n. Readers take it shared while they read
// entries from the mapping; the writer and the open/close paths take it
// exclusively (the mapping changes under an exclusive lock only, so a
// reader never touches an unmapped page).
type mappedIndex struct {
	path       string // guarded by the segment's fmu (renames)
	entrySize  int
	maxEntries int

	mu       sync.RWMutex
	data     []byte // the mapping; nil when closed or sealed and empty
	writable bool   // data is the read-write preallocated mapping
	n        int    // entries
}

// entry returns entry i's bytes (mu held, data mapped, i < n).
func (x *mappedIndex) entry(i int) []byte {
	return x.data[i*x.entrySize : (i+1)*x.entrySize]
}

// mapped reports whether the n entries can be read (mu held).
func (x *mappedIndex) mapped() bool { return x.n == 0 || len(x.data) >= x.n*x.entrySize }

// mapFile maps the file: writable preallocates it to max(maxEntries, n)
// entries (creating it if missing); read-only maps exactly n entries (no
// mapping when empty). Errors: I/O errors, and one wrapping
// errSegmentGone when a read-only file is missing.
func (x *mappedIndex) mapFile(writable bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.mapLocked(writable)
}

func (x *mappedIndex) mapLocked(writable bool) error {
	if x.data != nil {
		return nil
	}
	x.writable = writable
	if !writable && x.n == 0 {
		return nil
	}
	flags, prot := unix.O_RDONLY, unix.PROT_READ
	size := x.n * x.entrySize
	if writable {
		flags, prot = unix.O_RDWR|unix.O_CREAT, unix.PROT_READ|unix.PROT_WRITE
		size = max(x.maxEntries, x.n) * x.entrySize
	}
	fd, err := unix.Open(x.path, flags|unix.O_CLOEXEC, 0o644)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("map %s: %w", x.path, errors.Join(err, errSegmentGone))
		}
		return fmt.Errorf("map %s: %w", x.path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("map %s: %w", x.path, err)
	}
	switch {
	case writable && st.Size != int64(size):
		// Preallocate (sparse, as Kafka's RandomAccessFile.setLength).
		if err := unix.Ftruncate(fd, int64(size)); err != nil {
			return fmt.Errorf("preallocate %s: %w", x.path, err)
		}
	case !writable && st.Size < int64(size):
		return fmt.Errorf("%w: %s: %d bytes, %d entries expected", errIndexCorrupt, x.path, st.Size, x.n)
	}
	data, err := unix.Mmap(fd, 0, size, prot, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap %s (%d bytes): %w", x.path, size, err)
	}
	// Lookups are binary searches: read-ahead on a fault would only read
	// (or, in a preallocated file's holes, zero-fill) pages never used.
	_ = unix.Madvise(data, unix.MADV_RANDOM)
	x.data = data
	return nil
}

// unmap drops the mapping (dirty pages stay in the page cache and reach
// the file as usual).
func (x *mappedIndex) unmap() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.unmapLocked()
}

func (x *mappedIndex) unmapLocked() error {
	if x.data == nil {
		return nil
	}
	err := unix.Munmap(x.data)
	x.data = nil
	if err != nil {
		return fmt.Errorf("munmap %s: %w", x.path, err)
	}
	return nil
}

// trim cuts the file to its entries (Kafka's trimToValidSize), so sealed
// index files are exactly as long as their content, as other tools expect.
// The mapping must be dropped first.
func (x *mappedIndex) trim() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.trimLocked()
}

func (x *mappedIndex) trimLocked() error {
	if x.data != nil {
		return fmt.Errorf("trim %s: still mapped", x.path)
	}
	// Created if missing: every segment has both index files, as Kafka's
	// (the time index is mapped, and so created, only on first use).
	f, err := os.OpenFile(x.path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("trim %s: %w", x.path, err)
	}
	err = f.Truncate(int64(x.n * x.entrySize))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("trim %s: %w", x.path, err)
	}
	return nil
}

// reshape switches between the read-write preallocated and the read-only
// trimmed form (the segment became active or sealed): unmap, trim when
// sealing, and map again when the segment is open.
// The exclusive lock is held throughout, so readers of a pinned segment
// see either mapping, never none.
func (x *mappedIndex) reshape(writable, open bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.unmapLocked(); err != nil {
		return err
	}
	x.writable = writable
	if !writable {
		if err := x.trimLocked(); err != nil {
			return err
		}
	}
	if !open {
		return nil
	}
	return x.mapLocked(writable)
}

// write stores entry i (mu held exclusively, i < capacity). Errors: the
// index is not mapped read-write (its segment is sealed or closed) or full.
func (x *mappedIndex) write(i int, b []byte) error {
	if !x.writable || len(x.data) < (i+1)*x.entrySize {
		return fmt.Errorf("index %s: entry %d does not fit the mapping (%d bytes, writable %v)", x.path, i, len(x.data), x.writable)
	}
	copy(x.data[i*x.entrySize:], b)
	return nil
}

// sync fsyncs the index file through a transient descriptor (fsync writes
// back the pages dirtied through the mapping as well).
func (x *mappedIndex) sync() error {
	fd, err := unix.Open(x.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("fsync %s: %w", x.path, err)
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("fsync %s: %w", x.path, err)
	}
	return nil
}

// checkIndexFile reads an existing index file in chunks and hands each to
// check (whole entries; first is the index of the chunk's first entry),
// stopping at the first error: a preallocated file's zero tail costs one
// chunk, not its whole length (and no mapping, whose first fault would read
// ahead and zero-fill megabytes of holes). A missing file is an error
// wrapping fs.ErrNotExist; a size that is not whole entries one wrapping
// errIndexCorrupt.
func checkIndexFile(path string, entrySize int, check func(first int, data []byte) error) (entries int, err error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Size%int64(entrySize) != 0 {
		return 0, fmt.Errorf("%w: %s: size %d not a multiple of %d", errIndexCorrupt, path, st.Size, entrySize)
	}
	buf := make([]byte, min(int64(indexCheckChunk/entrySize*entrySize), st.Size))
	for off := int64(0); off < st.Size; {
		n := min(int64(len(buf)), st.Size-off)
		m, err := unix.Pread(fd, buf[:n], off)
		if err != nil || int64(m) != n {
			return 0, fmt.Errorf("read %s at %d: %d of %d bytes, %v", path, off, m, n, err)
		}
		if err := check(int(off)/entrySize, buf[:n]); err != nil {
			return 0, err
		}
		off += n
	}
	return int(st.Size) / entrySize, nil
}

// indexCheckChunk is how much of an index file checkIndexFile reads at once.
const indexCheckChunk = 64 << 10
