package record

import (
	"errors"
	"fmt"
)

// CorruptError means the batch bytes are damaged: a bad CRC, a wrong magic
// byte, a length that does not fit. The protocol layer maps it to
// CORRUPT_MESSAGE (error code 2); recovery truncates the log at it.
type CorruptError struct {
	Reason string // human-readable cause
	Field  string // header field at fault, if any
	Value  int64  // offending value, if any
	// Err is the underlying cause, if any (e.g. compress.ErrTooLarge or
	// compress.ErrMalformed from decompression); see Unwrap.
	Err error
}

func (e *CorruptError) Error() string {
	if e.Field == "" {
		return "corrupt record batch: " + e.Reason
	}
	return fmt.Sprintf("corrupt record batch: %s (%s=%d)", e.Reason, e.Field, e.Value)
}

// Unwrap returns the underlying cause (nil for most corruptions).
func (e *CorruptError) Unwrap() error { return e.Err }

// InvalidError means the batch is intact but breaks a rule: record count
// against the header, offset deltas, a missing key on a compacted topic. The
// protocol layer maps it to INVALID_RECORD (error code 87). RecordIndex is the
// index of the record at fault, or -1 for the batch as a whole (KIP-467
// record_errors).
type InvalidError struct {
	Reason      string
	RecordIndex int
}

func (e *InvalidError) Error() string {
	if e.RecordIndex < 0 {
		return "invalid record batch: " + e.Reason
	}
	return fmt.Sprintf("invalid record batch: record %d: %s", e.RecordIndex, e.Reason)
}

// IsCorrupt reports whether err is (or wraps) a *CorruptError.
func IsCorrupt(err error) bool {
	var c *CorruptError
	return errors.As(err, &c)
}

// IsInvalid reports whether err is (or wraps) an *InvalidError.
func IsInvalid(err error) bool {
	var c *InvalidError
	return errors.As(err, &c)
}

func errTruncated(have, want int) error {
	return &CorruptError{Reason: fmt.Sprintf("truncated: %d bytes, need %d", have, want)}
}

// TimestampError means a record's timestamp breaks the topic's timestamp
// rules: a CreateTime timestamp further from the broker's clock than
// message.timestamp.difference.max.ms, or a producer claiming
// LogAppendTime. The protocol layer maps it to INVALID_TIMESTAMP (error
// code 32). RecordIndex is the record at fault or -1 (KIP-467).
type TimestampError struct {
	Reason      string
	RecordIndex int
}

func (e *TimestampError) Error() string {
	if e.RecordIndex < 0 {
		return "invalid timestamp: " + e.Reason
	}
	return fmt.Sprintf("invalid timestamp: record %d: %s", e.RecordIndex, e.Reason)
}
