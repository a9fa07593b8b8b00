package record

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrBadControlRecord reports a control record whose key or value is too
// short to decode.
var ErrBadControlRecord = errors.New("record: bad control record")

// ControlType is a control record's type (Kafka's ControlRecordType, the
// int16 after the version in the control record's key).
type ControlType int16

// Control record types (Kafka's ControlRecordType). Types other than these
// are kept and skipped by readers, as Kafka does for unknown types.
const (
	ControlAbort  ControlType = 0
	ControlCommit ControlType = 1
)

// ControlKey decodes a control record's key: version int16 (0) and type
// int16. Errors: a key shorter than 4 bytes.
func ControlKey(key []byte) (version int16, typ ControlType, err error) {
	if len(key) < 4 {
		return 0, 0, fmt.Errorf("%w: control record key of %d bytes, want at least 4", ErrBadControlRecord, len(key))
	}
	return int16(binary.BigEndian.Uint16(key)), ControlType(binary.BigEndian.Uint16(key[2:])), nil
}

// EndTxnMarkerValue decodes the value of a COMMIT or ABORT control record
// (Kafka's EndTransactionMarker: version int16 = 0, coordinatorEpoch
// int32). Errors: a value shorter than 6 bytes.
func EndTxnMarkerValue(value []byte) (coordinatorEpoch int32, err error) {
	if len(value) < 6 {
		return 0, fmt.Errorf("%w: end transaction marker value of %d bytes, want at least 6", ErrBadControlRecord, len(value))
	}
	return int32(binary.BigEndian.Uint32(value[2:])), nil
}

// EndTxn is a decoded transaction marker: the control type of a control
// batch's first record (COMMIT or ABORT for markers) and, for those two,
// the coordinator epoch of its EndTransactionMarker value.
type EndTxn struct {
	Type             ControlType
	CoordinatorEpoch int32
}

// Commit reports whether the marker commits (type COMMIT); any other type
// is treated as an abort by readers, as Kafka's ControlRecordType only
// knows these two for transaction markers.
func (m EndTxn) Commit() bool { return m.Type == ControlCommit }

// ReadEndTxn decodes the control record of control batch b (header h, as
// Kafka's ProducerAppendInfo reads the first record of a control batch).
// ok is false for an empty control batch (the cleaner removed its record,
// Kafka then treats the batch as carrying nothing). maxUncompressed bounds
// decompression. Errors: *CorruptError / *InvalidError from decoding,
// ErrBadControlRecord for a key or value too short.
func ReadEndTxn(h Header, b []byte, maxUncompressed int) (m EndTxn, ok bool, err error) {
	errFirst := errors.New("first record read")
	err = Records(h, b, maxUncompressed, func(r *Record) error {
		_, typ, kerr := ControlKey(r.Key)
		if kerr != nil {
			return kerr
		}
		m.Type, ok = typ, true
		if typ == ControlAbort || typ == ControlCommit {
			e, verr := EndTxnMarkerValue(r.Value)
			if verr != nil {
				return verr
			}
			m.CoordinatorEpoch = e
		}
		return errFirst
	})
	if errors.Is(err, errFirst) {
		err = nil
	}
	return m, ok && err == nil, err
}
