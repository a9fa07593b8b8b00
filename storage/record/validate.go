package record

import (
	"fmt"
	"strings"
)

// ValidateIntegrity checks only that the batch at the start of b is intact,
// as Kafka's DefaultRecordBatch.ensureValid does: the header is complete,
// the batch fits in b, magic is 2 and the CRC-32C matches. It returns the
// header and the batch's bytes (b[:h.Size()]). Log recovery and follower
// appends use it: batches already accepted by a leader may legitimately be
// empty (compaction keeps empty batches for producer state), so the
// client-side rules of Validate do not apply to them.
//
// Errors: *CorruptError (CORRUPT_MESSAGE, error code 2).
func ValidateIntegrity(b []byte) (Header, []byte, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return h, nil, err
	}
	if h.Magic != 2 {
		return h, nil, &CorruptError{Reason: "unsupported magic byte", Field: "magic", Value: int64(h.Magic)}
	}
	size := h.Size()
	if size > len(b) {
		return h, nil, errTruncated(len(b), size)
	}
	batch := b[:size]
	if got := ComputeCRC(batch); got != h.CRC {
		return h, nil, &CorruptError{Reason: fmt.Sprintf("crc mismatch: stored %#08x, computed %#08x", h.CRC, got), Field: "crc", Value: int64(h.CRC)}
	}
	return h, batch, nil
}

// Validate checks the batch at the start of b the way Kafka's broker does on
// a client produce (LogValidator.validateBatch for AppendOrigin.CLIENT):
// everything ValidateIntegrity checks, then that the record count is
// positive and agrees with lastOffsetDelta, and that an idempotent batch
// (producerId >= 0) carries a sequence number. It returns the header and
// the batch's bytes (b[:h.Size()]).
//
// Errors: *CorruptError for damaged bytes (CORRUPT_MESSAGE), *InvalidError
// for rule violations (INVALID_RECORD, error code 87). Records inside the
// batch are checked by ValidateRecords. Kafka also refuses control batches
// from clients; that depends on who appends, so the produce path checks
// h.IsControl() itself.
func Validate(b []byte) (Header, []byte, error) {
	h, batch, err := ValidateIntegrity(b)
	if err != nil {
		return h, nil, err
	}
	if h.LastOffsetDelta < 0 {
		return h, nil, &InvalidError{Reason: fmt.Sprintf("batch has an invalid offset range: lastOffsetDelta %d", h.LastOffsetDelta), RecordIndex: -1}
	}
	if h.RecordCount <= 0 {
		return h, nil, &InvalidError{Reason: fmt.Sprintf("invalid reported count for record batch: %d", h.RecordCount), RecordIndex: -1}
	}
	if int64(h.LastOffsetDelta)+1 != int64(h.RecordCount) {
		return h, nil, &InvalidError{Reason: fmt.Sprintf("inconsistent batch offset range: lastOffsetDelta %d with %d records", h.LastOffsetDelta, h.RecordCount), RecordIndex: -1}
	}
	if h.HasProducerID() && h.BaseSequence < 0 {
		return h, nil, &InvalidError{Reason: fmt.Sprintf("invalid sequence number %d in record batch with producerId %d", h.BaseSequence, h.ProducerID), RecordIndex: -1}
	}
	return h, batch, nil
}

// ValidateRecords walks every record of an already Validate'd batch
// (decompressing at most maxUncompressed bytes) and checks that there are
// exactly RecordCount records, that offset deltas run 0, 1, 2, … (Kafka's
// inner-offset check), that each record parses and fills exactly its
// declared length, and that nothing trails the last record. keyRequired
// enforces Kafka's rule that records of compacted topics have a key
// (cleanup.policy=compact); control records are exempt. It is CheckRecords
// without the timestamp check.
//
// Errors: *InvalidError with the index of the offending record or -1, or,
// for keyless records, Records naming every one (KIP-467 record_errors);
// *CorruptError when decompression fails or exceeds maxUncompressed (its
// Err is then compress.ErrTooLarge).
func ValidateRecords(h Header, batch []byte, maxUncompressed int, keyRequired bool) error {
	_, err := CheckRecords(h, batch, Rules{MaxUncompressed: maxUncompressed, KeyRequired: keyRequired})
	return err
}

// Rules are the per-record checks CheckRecords applies on the produce path
// (Kafka's LogValidator for records from clients).
type Rules struct {
	// MaxUncompressed bounds decompression (bytes); more is a
	// *CorruptError wrapping compress.ErrTooLarge.
	MaxUncompressed int
	// KeyRequired: records must have a key (cleanup.policy=compact).
	KeyRequired bool
	// Now is the broker's clock (ms since the epoch) the timestamps are
	// compared with.
	Now int64
	// MaxTimestampDiff is message.timestamp.difference.max.ms: a CreateTime
	// record's timestamp may differ from Now by at most this many ms.
	// <= 0 (or math.MaxInt64) disables the check.
	MaxTimestampDiff int64
	// MaxTimestampBefore and MaxTimestampAfter are
	// message.timestamp.before.max.ms and message.timestamp.after.max.ms
	// (KIP-937, Kafka 3.6+): how far a CreateTime timestamp may lie before
	// and after Now. A value in (0, math.MaxInt64) replaces
	// MaxTimestampDiff on its side; <= 0 or math.MaxInt64 leaves it (Kafka:
	// before/after at their Long.MaxValue default take the difference).
	MaxTimestampBefore, MaxTimestampAfter int64
}

// timestampBounds are the ms a timestamp may lie before and after Now
// (maxInt64: unbounded), Kafka's LogConfig rule: before/after when set,
// else the deprecated difference.
func (r Rules) timestampBounds() (before, after int64) {
	before, after = r.MaxTimestampDiff, r.MaxTimestampDiff
	if before <= 0 {
		before, after = maxInt64, maxInt64
	}
	if r.MaxTimestampBefore > 0 && r.MaxTimestampBefore < maxInt64 {
		before = r.MaxTimestampBefore
	}
	if r.MaxTimestampAfter > 0 && r.MaxTimestampAfter < maxInt64 {
		after = r.MaxTimestampAfter
	}
	return before, after
}

// CheckRecords does what ValidateRecords does and also checks timestamps
// the way Kafka's LogValidator.validateTimestamp does: with
// MaxTimestampDiff > 0, every record's CreateTime timestamp must lie within
// MaxTimestampDiff ms of Now. It returns the largest record timestamp
// (Kafka recomputes the batch's maxTimestamp from the records instead of
// trusting the producer's header; -1 for a batch without records). The
// batch's own timestamp type is not judged here: the caller decides what a
// LogAppendTime batch from a client means.
//
// Like Kafka's LogValidator, the per-record rules (a key on a compacted
// topic, then the timestamp) do not stop at the first record breaking one:
// every record is checked, and the error's Records names each record at
// fault with its own message (at most MaxRecordErrors of them), for the
// produce response's record_errors (KIP-467). Damage that stops the walk
// (a malformed record, an offset delta out of order, a wrong count) is
// returned alone instead, with RecordIndex.
//
// Errors: as ValidateRecords, plus *TimestampError (INVALID_TIMESTAMP) when
// any record's timestamp is out of range (Kafka's precedence: records
// without keys are then listed in it too). For an uncompressed batch that
// passes it allocates nothing.
func CheckRecords(h Header, batch []byte, rules Rules) (maxTimestamp int64, err error) {
	body, buf, err := recordsSection(h, batch, rules.MaxUncompressed)
	defer releaseDecodeBuf(buf)
	if err != nil {
		return -1, err
	}
	// The walk is inlined here rather than going through Records' callback
	// so the Record stays on the stack: no allocation per batch or record.
	before, after := rules.timestampBounds()
	checkTs := before < maxInt64 || after < maxInt64
	keyRequired := rules.KeyRequired && !h.IsControl()
	maxTs := int64(-1)
	var faults recordFaults // stays empty (no allocation) for a valid batch
	var r Record
	i := 0
	for ; len(body) > 0; i++ {
		n, err := nextRecord(h.RecordCount, body, i, &r)
		if err != nil {
			return -1, err
		}
		body = body[n:]
		if r.OffsetDelta != int32(i) {
			return -1, &InvalidError{Reason: fmt.Sprintf("offset delta %d, want %d", r.OffsetDelta, i), RecordIndex: i}
		}
		ts := h.BaseTimestamp + r.TimestampDelta
		switch {
		case keyRequired && r.Key == nil:
			faults.missingKey(i)
		case checkTs && outOfRange(ts, rules.Now, before, after):
			// Kafka's bounds in the message, wrapped as Java's long
			// arithmetic wraps for an unbounded side.
			faults.badTimestamp(i, ts, h.BaseOffset+int64(r.OffsetDelta), rules.Now-before, rules.Now+after)
		}
		maxTs = max(maxTs, ts)
	}
	if int32(i) != h.RecordCount {
		return -1, &InvalidError{Reason: fmt.Sprintf("header says %d records, batch holds %d", h.RecordCount, i), RecordIndex: -1}
	}
	if faults.total > 0 {
		return -1, faults.err()
	}
	return maxTs, nil
}

// outOfRange reports whether ts lies more than before ms before now or
// more than after ms after it (maxInt64: that side unbounded).
func outOfRange(ts, now, before, after int64) bool {
	if ts == NoTimestamp {
		// A record without a timestamp (-1) is not judged, as in Kafka's
		// LogValidator.validateTimestamp.
		return false
	}
	// A difference that overflows int64 (a timestamp near MinInt64 or
	// MaxInt64) is out of any finite bound.
	if ts < now {
		d := now - ts
		return before < maxInt64 && (d < 0 || d > before)
	}
	d := ts - now
	return after < maxInt64 && (d < 0 || d > after)
}

// recordFaults collects the per-record rule violations of one batch, as
// Kafka's LogValidator does (its recordErrors) before rejecting the batch.
type recordFaults struct {
	list      []RecordError // the first MaxRecordErrors records at fault
	total     int           // records at fault, listed or not
	timestamp bool          // a record's timestamp is among them
}

// missingKey: record index has no key on a compacted topic. The
// per-record messages are Kafka's minus its " in topic partition …"
// suffix (the caller knows the partition, this package does not).
func (f *recordFaults) missingKey(index int) {
	f.add(index, "Compacted topic cannot accept message without key")
}

// badTimestamp: record index, at offset, has timestamp ts outside [lo, hi].
func (f *recordFaults) badTimestamp(index int, ts, offset, lo, hi int64) {
	f.timestamp = true
	if len(f.list) >= MaxRecordErrors {
		f.total++ // not listed: spare the formatting
		return
	}
	f.add(index, fmt.Sprintf("Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]", ts, offset, lo, hi))
}

func (f *recordFaults) add(index int, msg string) {
	f.total++
	if len(f.list) < MaxRecordErrors {
		f.list = append(f.list, RecordError{Index: index, Message: msg})
	}
}

// err is the batch's error with Kafka's summary messages
// (LogValidator.processRecordErrors): INVALID_TIMESTAMP if any timestamp
// is out of range, else INVALID_RECORD showing the first three.
func (f *recordFaults) err() error {
	if f.timestamp {
		return &TimestampError{Reason: "One or more records have been rejected due to invalid timestamp", RecordIndex: -1, Records: f.list}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "One or more records have been rejected due to %d record errors in total, and only showing the first three errors at most: [", f.total)
	for j, e := range f.list[:min(len(f.list), 3)] {
		if j > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(e.String())
	}
	sb.WriteByte(']')
	return &InvalidError{Reason: sb.String(), RecordIndex: -1, Records: f.list}
}

const maxInt64 = int64(^uint64(0) >> 1)
