package record

import "fmt"

// Validate checks the batch at the start of b the way Kafka's broker does on
// append: the header is complete, the batch fits in b, magic is 2, the CRC-32C
// matches, the record count agrees with lastOffsetDelta. It returns the
// header and the batch's bytes (b[:h.Size()]).
//
// Errors: *CorruptError for damaged bytes (CORRUPT_MESSAGE), *InvalidError
// for rule violations (INVALID_RECORD). Records inside the batch are checked
// by ValidateRecords.
func Validate(b []byte) (Header, []byte, error) {
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
	if h.RecordCount <= 0 {
		return h, nil, &InvalidError{Reason: fmt.Sprintf("record count %d, want at least 1", h.RecordCount), RecordIndex: -1}
	}
	if h.LastOffsetDelta < 0 || int64(h.LastOffsetDelta)+1 != int64(h.RecordCount) {
		return h, nil, &InvalidError{Reason: fmt.Sprintf("inconsistent batch offset range: lastOffsetDelta %d with %d records", h.LastOffsetDelta, h.RecordCount), RecordIndex: -1}
	}
	return h, batch, nil
}

// ValidateRecords walks every record of an already Validate'd batch
// (decompressing at most maxUncompressed bytes) and checks that there are
// exactly RecordCount records, that offset deltas run 0, 1, 2, … and that no
// record overruns its batch. keyRequired enforces Kafka's rule that records
// of compacted topics have a key (cleanup.policy=compact).
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
