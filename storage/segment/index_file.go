package segment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// openIndexFile opens the file of an index whose entries are entrySize
// bytes, for OffsetIndex and TimeIndex alike. Without load it creates or
// empties path and returns no data. With load the file must exist (else an
// error wrapping fs.ErrNotExist) and its content is returned; a size that is
// not a whole number of entries is an error wrapping errIndexCorrupt. On
// error the file is closed; otherwise the caller owns f and closes it if
// decoding data fails.
func openIndexFile(path string, entrySize int, load bool) (f *os.File, data []byte, err error) {
	flags := os.O_RDWR | os.O_CREATE
	if load {
		flags = os.O_RDWR
	}
	f, err = os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, nil, err
	}
	if !load {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, nil, err
		}
		return f, nil, nil
	}
	data, err = os.ReadFile(path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if len(data)%entrySize != 0 {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s: size %d not a multiple of %d", errIndexCorrupt, path, len(data), entrySize)
	}
	return f, data, nil
}
