package checkpoint

import (
	"bytes"
	"fmt"
	"strconv"
)

// LeaderEpochFile is the per-partition leader epoch cache file name.
const LeaderEpochFile = "leader-epoch-checkpoint"

// EpochEntry is one "<epoch> <startOffset>" line of leader-epoch-checkpoint:
// the first offset written under that leader epoch (KIP-101). Plain value.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// WriteEpochs atomically writes a leader-epoch-checkpoint file:
// "0\n<count>\n" then "<epoch> <startOffset>\n" lines in the given order.
func WriteEpochs(path string, entries []EpochEntry) error {
	return WriteFileAtomic(path, encodeEntries(entries, func(b *bytes.Buffer, e EpochEntry) {
		fmt.Fprintf(b, "%d %d\n", e.Epoch, e.StartOffset)
	}))
}

// ReadEpochs parses a leader-epoch-checkpoint. A missing file returns an
// error for which errors.Is(err, fs.ErrNotExist) holds; bad content a
// *FormatError.
func ReadEpochs(path string) ([]EpochEntry, error) {
	return readEntries(path, 2, "bad epoch entry %q", func(f []string) (EpochEntry, bool) {
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || e < 0 || o < 0 {
			return EpochEntry{}, false
		}
		return EpochEntry{Epoch: int32(e), StartOffset: o}, true
	})
}
