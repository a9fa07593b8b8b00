package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
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
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return WriteFileAtomic(path, b.Bytes())
}

// ReadEpochs parses a leader-epoch-checkpoint. A missing file returns an
// error for which errors.Is(err, fs.ErrNotExist) holds; bad content a
// *FormatError.
func ReadEpochs(path string) ([]EpochEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines, err := header(path, data)
	if err != nil {
		return nil, err
	}
	out := make([]EpochEntry, 0, len(lines))
	for i, ln := range lines {
		f := strings.Fields(ln)
		if len(f) != 2 {
			return nil, &FormatError{Path: path, Line: i + 3, Reason: fmt.Sprintf("want 2 fields, got %q", ln)}
		}
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || e < 0 || o < 0 {
			return nil, &FormatError{Path: path, Line: i + 3, Reason: fmt.Sprintf("bad epoch entry %q", ln)}
		}
		out = append(out, EpochEntry{Epoch: int32(e), StartOffset: o})
	}
	return out, nil
}
