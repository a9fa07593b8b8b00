package checkpoint

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
)

// File names of the per-log-dir offset checkpoints, as Kafka names them.
const (
	RecoveryPointFile  = "recovery-point-offset-checkpoint" // offset up to which the log is flushed
	LogStartOffsetFile = "log-start-offset-checkpoint"      // log start offset (DeleteRecords, retention)
	ReplicationFile    = "replication-offset-checkpoint"    // high watermark
	CleanerOffsetFile  = "cleaner-offset-checkpoint"        // first dirty offset of each compacted log (log cleaner)
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
	return encodeEntries(sorted, func(b *bytes.Buffer, e Entry) {
		fmt.Fprintf(b, "%s %d %d\n", e.Topic, e.Partition, e.Offset)
	})
}

// WriteOffsets atomically writes an offset checkpoint file (see EncodeOffsets).
func WriteOffsets(path string, entries []Entry) error {
	return WriteFileAtomic(path, EncodeOffsets(entries))
}

// ReadOffsets parses an offset checkpoint. A missing file returns an error
// for which errors.Is(err, fs.ErrNotExist) holds; bad content a *FormatError.
func ReadOffsets(path string) ([]Entry, error) {
	return readEntries(path, 3, "bad partition or offset in %q", func(f []string) (Entry, bool) {
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		o, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || p < 0 {
			return Entry{}, false
		}
		return Entry{Topic: f[0], Partition: int32(p), Offset: o}, true
	})
}
