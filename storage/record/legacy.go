package record

// Message formats v0 and v1 (magic 0 and 1), the message sets of Kafka
// before 0.11 (Kafka's LegacyRecord and AbstractLegacyRecordBatch). A
// message set is a sequence of
//
//	offset       int64
//	message_size int32  (bytes after this field)
//	crc          uint32 (CRC-32 IEEE over magic..end)
//	magic        int8   (0 or 1)
//	attributes   int8   (bits 0-2 codec; bit 3 LogAppendTime, magic 1)
//	timestamp    int64  (magic 1 only; ms, -1 = none)
//	key          int32 length (-1 = null) + bytes
//	value        int32 length (-1 = null) + bytes
//
// A compressed set is one "wrapper" message whose value is the codec's
// compression of an inner message set. Inner offsets are absolute for
// magic 0; for magic 1 they are relative (0..n-1 as written by correct
// producers) and the wrapper's offset is the last inner message's
// absolute offset (KIP-31). Gregor stores record batches (magic 2) only:
// produced message sets are converted on append, and fetches from old
// clients are down-converted (see DownConvert).

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"gregor/storage/compress"
)

// Sizes of the legacy message layout (Kafka's LegacyRecord constants).
const (
	// LegacyOverheadV0 is crc+magic+attributes+key length+value length
	// (14): the smallest valid message (RECORD_OVERHEAD_V0).
	LegacyOverheadV0 = 14
	// LegacyOverheadV1 adds the timestamp (22, RECORD_OVERHEAD_V1).
	LegacyOverheadV1 = 22
	// legacyAttrTimestampType is the LogAppendTime attribute bit (magic 1).
	legacyAttrTimestampType = 0x08
)

// LegacyMessage is one v0/v1 message. Key and Value alias the parsed
// input (or the decompressed inner set); nil means null.
type LegacyMessage struct {
	// Offset is the offset field as written: absolute for an uncompressed
	// or wrapper message and for magic-0 inner messages, relative for
	// magic-1 inner messages.
	Offset     int64
	Magic      int8
	Attributes int8
	// Timestamp is ms since the epoch, NoTimestamp (-1) for magic 0. For
	// the inner messages of a LogAppendTime wrapper it is the wrapper's
	// timestamp, as Kafka reads them.
	Timestamp int64
	Key       []byte
	Value     []byte
}

// Codec is the message's compression codec (attributes bits 0-2).
func (m *LegacyMessage) Codec() Codec { return Codec(m.Attributes & AttrCompressionMask) }

// IsLogAppendTime reports the timestamp-type bit (magic 1 only).
func (m *LegacyMessage) IsLogAppendTime() bool {
	return m.Magic >= 1 && m.Attributes&legacyAttrTimestampType != 0
}

// LegacySet is a producer's v0/v1 message set, unwrapped: what Kafka's
// LogValidator iterates when it converts the set to a record batch.
type LegacySet struct {
	Magic int8
	// Codec is the wrapper's codec; CodecNone for a set of plain messages.
	Codec Codec
	// Messages are the records in order: the plain messages, or the
	// wrapper's inner messages (their Offset as written, Attributes with
	// the wrapper's timestamp-type bit).
	Messages []LegacyMessage
}

// IsLegacyMagic reports whether b starts like a v0/v1 message set (the
// magic byte at the position a record batch has it is 0 or 1; the
// layouts agree on that byte's position: offset 8 + size 4 + crc 4).
func IsLegacyMagic(b []byte) bool {
	return len(b) > OffMagic && b[OffMagic] < 2
}

// ParseLegacySet parses and validates a producer's magic 0/1 message set,
// decompressing a wrapper to at most maxUncompressed bytes. It checks
// what Kafka's append path checks (UnifiedLog.analyzeAndValidateRecords,
// LogValidator, AbstractLegacyRecordBatch):
//
//   - each message's size at least 14 bytes, its CRC, its key and value
//     lengths → *CorruptError (CORRUPT_MESSAGE), also for inner messages;
//   - every message with the first one's magic, a compressed message
//     alone in its set, a wrapper with a value, a codec of 0-3, at least
//     one inner message, inner messages uncompressed and with the
//     wrapper's magic, a magic-1 wrapper offset (unless 0, as some
//     librdkafka versions write) not below the last inner offset →
//     *InvalidError (INVALID_RECORD);
//   - decompression beyond maxUncompressed → *CorruptError wrapping
//     compress.ErrTooLarge.
//
// A partial message at the end of the set (or of the inner set) is
// ignored, as Kafka's log input streams do; a set with no whole message is
// an *InvalidError. Inner offsets need not be 0..n-1: Kafka reassigns
// offsets on append ("some older clients do not implement the V1 internal
// offsets correctly"), and so does the conversion to a record batch.
func ParseLegacySet(b []byte, maxUncompressed int) (LegacySet, error) {
	var set LegacySet
	shallow, err := parseLegacyMessages(b, nil)
	if err != nil {
		return set, err
	}
	if len(shallow) == 0 {
		return set, &InvalidError{Reason: "Record batch has no batches at all", RecordIndex: -1}
	}
	set.Magic = shallow[0].Magic
	for i := range shallow {
		m := &shallow[i]
		if m.Magic != set.Magic {
			return set, &InvalidError{Reason: fmt.Sprintf("Batch magic %d is not the same as the first batch's magic byte %d", m.Magic, set.Magic), RecordIndex: -1}
		}
		if m.Codec() != CodecNone && len(shallow) > 1 {
			return set, &InvalidError{Reason: "Compressed outer record has more than one batch", RecordIndex: -1}
		}
	}
	w := &shallow[0]
	if w.Codec() == CodecNone {
		set.Messages = shallow
		return set, nil
	}
	set.Codec = w.Codec()
	inner, err := unwrapLegacy(w, maxUncompressed)
	if err != nil {
		return set, err
	}
	set.Messages = inner
	return set, nil
}

// unwrapLegacy decompresses a wrapper message and parses its inner set.
func unwrapLegacy(w *LegacyMessage, maxUncompressed int) ([]LegacyMessage, error) {
	c := w.Codec()
	if c > CodecLZ4 {
		return nil, &InvalidError{Reason: fmt.Sprintf("Invalid wrapper compressionType found in legacy deep record iterator %d (codec %d)", w.Magic, c), RecordIndex: -1}
	}
	if w.Value == nil {
		return nil, &InvalidError{Reason: fmt.Sprintf("Found invalid compressed record set with null value (magic = %d)", w.Magic), RecordIndex: -1}
	}
	src := w.Value
	if c == CodecLZ4 && w.Magic == 0 {
		fixed, err := compress.FixLegacyLZ4Checksum(src)
		if err != nil {
			return nil, &CorruptError{Reason: fmt.Sprintf("lz4 decompression: %v", err), Err: err}
		}
		src = fixed
	}
	body, err := compress.Decode(int8(c), src, maxUncompressed)
	if err != nil {
		return nil, &CorruptError{Reason: fmt.Sprintf("%s decompression: %v", c, err), Field: "attributes", Value: int64(w.Attributes), Err: err}
	}
	inner, err := parseLegacyMessages(body, nil)
	if err != nil {
		return nil, err
	}
	if len(inner) == 0 {
		return nil, &InvalidError{Reason: "Found invalid compressed record set with no inner records", RecordIndex: -1}
	}
	lat := w.IsLogAppendTime()
	for i := range inner {
		m := &inner[i]
		if m.Magic != w.Magic {
			return nil, &InvalidError{Reason: fmt.Sprintf("Compressed message magic %d does not match wrapper magic %d", m.Magic, w.Magic), RecordIndex: i}
		}
		if m.Codec() != CodecNone {
			return nil, &InvalidError{Reason: "Compressed outer record should not have an inner record with a compression attribute set", RecordIndex: i}
		}
		if lat {
			// A LogAppendTime wrapper's time applies to every inner message
			// (Kafka's LegacyRecord with the wrapper timestamp).
			m.Timestamp = w.Timestamp
			m.Attributes |= legacyAttrTimestampType
		}
	}
	if w.Magic == 1 && w.Offset != 0 {
		if last := inner[len(inner)-1].Offset; w.Offset < last {
			return nil, &InvalidError{Reason: fmt.Sprintf("Found invalid wrapper offset in compressed v1 message set, wrapper offset '%d' is less than the last inner message offset '%d' and it is not zero.", w.Offset, last), RecordIndex: -1}
		}
	}
	return inner, nil
}

// parseLegacyMessages appends the whole messages of set b to dst; a
// partial trailing message is ignored.
func parseLegacyMessages(b []byte, dst []LegacyMessage) ([]LegacyMessage, error) {
	for len(b) >= LogOverhead {
		off := int64(binary.BigEndian.Uint64(b))
		size := int32(binary.BigEndian.Uint32(b[8:]))
		if size < LegacyOverheadV0 {
			return dst, &CorruptError{Reason: fmt.Sprintf("Record size is less than the minimum record overhead (%d)", LegacyOverheadV0), Field: "message_size", Value: int64(size)}
		}
		if int64(len(b)-LogOverhead) < int64(size) {
			break // partial trailing message
		}
		m, err := parseLegacyMessage(b[LogOverhead : LogOverhead+int(size)])
		if err != nil {
			return dst, err
		}
		m.Offset = off
		dst = append(dst, m)
		b = b[LogOverhead+int(size):]
	}
	return dst, nil
}

// parseLegacyMessage decodes one message (crc onwards) of exactly len(b)
// bytes.
func parseLegacyMessage(b []byte) (LegacyMessage, error) {
	var m LegacyMessage
	stored := binary.BigEndian.Uint32(b)
	if computed := crc32.ChecksumIEEE(b[4:]); computed != stored {
		return m, &CorruptError{Reason: fmt.Sprintf("Record is corrupt (stored crc = %d, computed crc = %d)", stored, computed), Field: "crc", Value: int64(stored)}
	}
	m.Magic, m.Attributes = int8(b[4]), int8(b[5])
	p := b[6:]
	switch m.Magic {
	case 0:
		m.Timestamp = NoTimestamp
	case 1:
		if len(b) < LegacyOverheadV1 {
			return m, &CorruptError{Reason: fmt.Sprintf("Record size is less than the minimum record overhead (%d)", LegacyOverheadV1), Field: "message_size", Value: int64(len(b))}
		}
		m.Timestamp = int64(binary.BigEndian.Uint64(p))
		p = p[8:]
	default:
		return m, &CorruptError{Reason: fmt.Sprintf("Invalid magic value %d in a legacy message set", m.Magic), Field: "magic", Value: int64(m.Magic)}
	}
	var ok bool
	if m.Key, p, ok = legacyBytes(p); !ok {
		return m, &CorruptError{Reason: "Record is corrupt: key length does not fit the message", Field: "key_length"}
	}
	if m.Value, p, ok = legacyBytes(p); !ok {
		return m, &CorruptError{Reason: "Record is corrupt: value length does not fit the message", Field: "value_length"}
	}
	if len(p) != 0 {
		return m, &CorruptError{Reason: fmt.Sprintf("Record is corrupt: %d bytes after the value", len(p)), Field: "message_size"}
	}
	return m, nil
}

// legacyBytes reads int32-length-prefixed bytes (-1 = nil).
func legacyBytes(p []byte) (v, rest []byte, ok bool) {
	if len(p) < 4 {
		return nil, p, false
	}
	n := int32(binary.BigEndian.Uint32(p))
	p = p[4:]
	if n == -1 {
		return nil, p, true
	}
	if n < 0 || int64(n) > int64(len(p)) {
		return nil, p, false
	}
	return p[:n:n], p[n:], true
}
