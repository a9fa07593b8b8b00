package record

import "fmt"

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
// (cleanup.policy=compact); control records are exempt.
//
// Errors: *InvalidError with the index of the offending record (KIP-467
// record_errors) or -1; *CorruptError when decompression fails or exceeds
// maxUncompressed (its Err is then compress.ErrTooLarge).
func ValidateRecords(h Header, batch []byte, maxUncompressed int, keyRequired bool) error {
	i := 0
	err := Records(h, batch, maxUncompressed, func(r *Record) error {
		if r.OffsetDelta != int32(i) {
			return &InvalidError{Reason: fmt.Sprintf("offset delta %d, want %d", r.OffsetDelta, i), RecordIndex: i}
		}
		if keyRequired && r.Key == nil && !h.IsControl() {
			return &InvalidError{Reason: "compacted topic cannot accept message without key", RecordIndex: i}
		}
		i++
		return nil
	})
	if err != nil {
		return err
	}
	if int32(i) != h.RecordCount {
		return &InvalidError{Reason: fmt.Sprintf("header says %d records, batch holds %d", h.RecordCount, i), RecordIndex: -1}
	}
	return nil
}
