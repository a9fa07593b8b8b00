package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// File names of the per-log-dir offset checkpoints, as Kafka names them.
const (
	RecoveryPointFile  = "recovery-point-offset-checkpoint" // offset up to which the log is flushed
	LogStartOffsetFile = "log-start-offset-checkpoint"      // log start offset (DeleteRecords, retention)
	ReplicationFile    = "replication-offset-checkpoint"    // high watermark
)

// Entry is one line of an offset checkpoint: "<topic> <partition> <offset>".
// Plain value.
type Entry struct {
	Topic     string
	Partition int32
	Offset    int64
}

// EncodeOffsets renders entries in Kafka's offset checkpoint format:
// "0\n<count>\n" then one "<topic> <partition> <offset>\n" per entry, sorted
// by topic then partition so that the file is deterministic.
func EncodeOffsets(entries []Entry) []byte {
	sorted := append([]Entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Topic != sorted[j].Topic {
			return sorted[i].Topic < sorted[j].Topic
		}
		return sorted[i].Partition < sorted[j].Partition
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(sorted))
	for _, e := range sorted {
		fmt.Fprintf(&b, "%s %d %d\n", e.Topic, e.Partition, e.Offset)
	}
	return b.Bytes()
}

// WriteOffsets atomically writes an offset checkpoint file (see EncodeOffsets).
func WriteOffsets(path string, entries []Entry) error {
	return WriteFileAtomic(path, EncodeOffsets(entries))
}

// ReadOffsets parses an offset checkpoint. A missing file returns an error
// for which errors.Is(err, fs.ErrNotExist) holds; bad content a *FormatError.
func ReadOffsets(path string) ([]Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines, err := header(path, data)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(lines))
	for i, ln := range lines {
		f := strings.Fields(ln)
		if len(f) != 3 {
			return nil, &FormatError{Path: path, Line: i + 3, Reason: fmt.Sprintf("want 3 fields, got %q", ln)}
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		o, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || p < 0 {
			return nil, &FormatError{Path: path, Line: i + 3, Reason: fmt.Sprintf("bad partition or offset in %q", ln)}
		}
		out = append(out, Entry{Topic: f[0], Partition: int32(p), Offset: o})
	}
	return out, nil
}

// header checks the version line (must be 0) and the count line against the
// number of entry lines, and returns the entry lines.
func header(path string, data []byte) ([]string, error) {
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) < 2 {
		return nil, &FormatError{Path: path, Reason: "missing version or count line"}
	}
	if v := strings.TrimSpace(all[0]); v != "0" {
		return nil, &FormatError{Path: path, Line: 1, Reason: fmt.Sprintf("unsupported version %q", v)}
	}
	n, err := strconv.Atoi(strings.TrimSpace(all[1]))
	if err != nil || n < 0 {
		return nil, &FormatError{Path: path, Line: 2, Reason: fmt.Sprintf("bad count %q", all[1])}
	}
	lines := all[2:]
	if len(lines) != n {
		return nil, &FormatError{Path: path, Line: 2, Reason: fmt.Sprintf("count says %d entries, file has %d", n, len(lines))}
	}
	return lines, nil
}
