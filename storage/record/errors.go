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
// index of the record at fault, or -1 for the batch as a whole or when
// Records names the records at fault (KIP-467 record_errors: every record
// breaking a per-record rule, as Kafka's LogValidator reports them; Reason
// is then Kafka's summary). RecordErrors gives either form as a list.
type InvalidError struct {
	Reason      string
	RecordIndex int
	Records     []RecordError
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
// code 32). RecordIndex is the record at fault or -1; Records, as in
// InvalidError, names every record at fault (KIP-467). A batch where any
// record's timestamp is out of range is a TimestampError even if other
// records break other rules (those are in Records too), as in Kafka.
type TimestampError struct {
	Reason      string
	RecordIndex int
	Records     []RecordError
}

func (e *TimestampError) Error() string {
	if e.RecordIndex < 0 {
		return "invalid timestamp: " + e.Reason
	}
	return fmt.Sprintf("invalid timestamp: record %d: %s", e.RecordIndex, e.Reason)
}

// RecordErrors lists the records at fault (KIP-467): Records, else the
// record RecordIndex names (with the error's text), else none.
func (e *TimestampError) RecordErrors() []RecordError {
	return recordErrors(e.Records, e.RecordIndex, e)
}

// RecordErrors lists the records at fault (KIP-467): Records, else the
// record RecordIndex names (with the error's text), else none.
func (e *InvalidError) RecordErrors() []RecordError {
	return recordErrors(e.Records, e.RecordIndex, e)
}

func recordErrors(records []RecordError, index int, err error) []RecordError {
	if len(records) > 0 || index < 0 {
		return records
	}
	return []RecordError{{Index: index, Message: err.Error()}}
}

// RecordError is one record's fault in a rejected batch, as a produce
// response reports it (KIP-467 record_errors): the record's index in its
// batch (batch_index) and why (batch_index_error_message).
type RecordError struct {
	Index   int
	Message string
}

// String formats e as Kafka's ProduceResponse.RecordError does; Kafka's
// INVALID_RECORD summary lists the first three that way.
func (e RecordError) String() string {
	return fmt.Sprintf("RecordError(batchIndex=%d, message='%s')", e.Index, e.Message)
}

// MaxRecordErrors bounds the RecordErrors one rejected batch carries. A
// batch cannot name more records at fault than it holds, but a compressed
// batch may inflate to millions of tiny records: past this many, further
// records at fault are counted (in the summary) but not listed, so the
// error and the produce response stay small. Kafka lists them all.
const MaxRecordErrors = 1000
