// Package dumplog implements `gregor dump-log`, the counterpart of Kafka's
// kafka-dump-log.sh (kafka.tools.DumpLogSegments): it prints the record
// batches of segment .log files and the entries of .index / .timeindex
// files (and .txnindex aborted transactions and producer .snapshot
// files), flagging damage, in Kafka's output format so operators' scripts
// and habits carry over.
package dumplog

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// Options are the tool's flags (names as kafka-dump-log.sh).
type Options struct {
	// Files are the segment files to dump (--files, comma separated):
	// .log, .index, .timeindex, .txnindex, .snapshot (producer state).
	Files []string
	// PrintDataLog prints each record's key and payload (--print-data-log);
	// it implies DeepIteration.
	PrintDataLog bool
	// DeepIteration prints one line per record (--deep-iteration).
	DeepIteration bool
	// OffsetsDecoder decodes __consumer_offsets keys and values
	// (--offsets-decoder); implies PrintDataLog.
	OffsetsDecoder bool
	// TransactionLogDecoder decodes __transaction_state keys and values
	// (--transaction-log-decoder); implies PrintDataLog. With
	// OffsetsDecoder too, the offsets decoder is used, as in Kafka.
	TransactionLogDecoder bool
	// MaxMessageSize is the largest batch read, in bytes
	// (--max-message-size, default 5 MiB as Kafka's tool). A batch header
	// claiming more is reported as damage and stops that file's dump.
	MaxMessageSize int
}

// DefaultMaxMessageSize is kafka-dump-log's --max-message-size default.
const DefaultMaxMessageSize = 5 * 1024 * 1024

// ErrInvalid is returned by Run when any dumped file held damage (a bad
// batch, a torn tail, an index entry pointing nowhere); the dump itself
// went on as far as it could.
var ErrInvalid = errors.New("dump-log: invalid data found")

// Run dumps every file in opts.Files to out, with damage reports on errOut
// (Kafka prints mismatch summaries to stderr). It returns ErrInvalid
// (wrapped) if anything was invalid, or the first I/O error that stopped a
// file; other files are still dumped.
func Run(out, errOut io.Writer, opts Options) error {
	if len(opts.Files) == 0 {
		return errors.New("dump-log: --files is required")
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.OffsetsDecoder || opts.TransactionLogDecoder {
		opts.PrintDataLog = true
	}
	if opts.PrintDataLog {
		opts.DeepIteration = true
	}
	var firstErr error
	invalid := false
	for _, f := range opts.Files {
		var bad bool
		var err error
		switch ext := filepath.Ext(f); ext {
		case ".log":
			bad, err = dumpLog(out, errOut, f, opts)
		case ".index":
			bad, err = dumpIndex(out, errOut, f, opts)
		case ".timeindex":
			bad, err = dumpTimeIndex(out, errOut, f, opts)
		case ".txnindex":
			bad, err = dumpTxnIndex(out, errOut, f)
		case ".snapshot":
			bad, err = dumpProducerSnapshot(out, errOut, f)
		default:
			fmt.Fprintf(errOut, "Ignoring unknown file %s\n", f)
			continue
		}
		invalid = invalid || bad
		if err != nil {
			fmt.Fprintf(errOut, "Error dumping %s: %v\n", f, err)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if invalid {
		return ErrInvalid
	}
	return nil
}

// baseOffsetOf parses a segment file name "<20 digits>.<ext>" into its base
// offset.
func baseOffsetOf(path string) (int64, error) {
	name := filepath.Base(path)
	stem := strings.TrimSuffix(name, filepath.Ext(name))
	off, err := strconv.ParseInt(stem, 10, 64)
	if err != nil || off < 0 {
		return 0, fmt.Errorf("%s is not named <base offset>%s", name, filepath.Ext(name))
	}
	return off, nil
}

// siblingLog is the .log file beside an index file.
func siblingLog(indexPath string) string {
	return strings.TrimSuffix(indexPath, filepath.Ext(indexPath)) + ".log"
}
