// Package segment is one segment of a partition log, in Kafka's on-disk
// format: <base offset, 20 digits>.log holds record batches byte-for-byte as
// appended; .index maps relative offsets to file positions (sparse, 8-byte
// entries); .timeindex maps timestamps to relative offsets (12-byte entries).
//
// Indexes are memory-mapped as Kafka's: the active segment's index files
// are preallocated to segment.index.bytes (sparse) and mapped read-write;
// on roll or close they are trimmed to their entries and mapped read-only,
// so sealed files are exactly Kafka's. The .log descriptors and the
// mappings of all segments are bounded by a FileCache (files.go): an idle
// segment holds no descriptor, an open one exactly one.
package segment

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// File suffixes used in a partition directory (Kafka's LogFileUtils).
const (
	LogSuffix       = ".log"
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
	// TxnIndexSuffix is the aborted transaction index (Kafka's
	// LogFileUtils.TXN_INDEX_FILE_SUFFIX), written lazily.
	TxnIndexSuffix = ".txnindex"
	// DeletedSuffix marks a segment file scheduled for deletion (retention).
	DeletedSuffix = ".deleted"
	// CleanedSuffix marks a compaction output still being written.
	CleanedSuffix = ".cleaned"
	// SwapSuffix marks a compaction output ready to replace old segments.
	SwapSuffix = ".swap"
)

// FileName is the 20-digit zero-padded base offset plus suffix, e.g.
// 00000000000000000042.log.
func FileName(base int64, suffix string) string { return fmt.Sprintf("%020d%s", base, suffix) }

// Path joins dir and FileName(base, suffix).
func Path(dir string, base int64, suffix string) string {
	return filepath.Join(dir, FileName(base, suffix))
}

// ParseName splits a segment file name into its base offset and suffix (the
// part after the 20 digits, e.g. ".log" or ".index.deleted"). ok is false
// for names that are not segment files.
func ParseName(name string) (base int64, suffix string, ok bool) {
	if len(name) < 21 || name[20] != '.' {
		return 0, "", false
	}
	b, err := strconv.ParseInt(name[:20], 10, 64)
	if err != nil || b < 0 {
		return 0, "", false
	}
	suffix = name[20:]
	switch strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(suffix, DeletedSuffix), CleanedSuffix), SwapSuffix) {
	case LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix:
		return b, suffix, true
	}
	return 0, "", false
}
