package server

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// requestHeader is the fixed part of every Kafka request header (v0..v2):
// request_api_key int16, request_api_version int16, correlation_id int32.
// Header v1 adds client_id (nullable string, int16 length even in flexible
// versions); header v2 adds tagged fields (KIP-482).
type requestHeader struct {
	key           int16
	version       int16
	correlationID int32
}

var errShortHeader = errors.New("frame shorter than the 8-byte request header")

// parseFixedHeader reads key, version and correlation id from a frame and
// returns the bytes after them.
func parseFixedHeader(frame []byte) (requestHeader, []byte, error) {
	if len(frame) < 8 {
		return requestHeader{}, nil, errShortHeader
	}
	h := requestHeader{
		key:           int16(binary.BigEndian.Uint16(frame[0:])),
		version:       int16(binary.BigEndian.Uint16(frame[2:])),
		correlationID: int32(binary.BigEndian.Uint32(frame[4:])),
	}
	return h, frame[8:], nil
}

// parseClientID reads the nullable client_id string (int16 length, -1 =
// null; "" is returned for null) and, when flexible, skips the header's
// tagged fields. It returns the request body that follows.
func parseClientID(b []byte, flexible bool) (string, []byte, error) {
	if len(b) < 2 {
		return "", nil, errors.New("request header truncated in client_id length")
	}
	n := int(int16(binary.BigEndian.Uint16(b)))
	b = b[2:]
	var id string
	switch {
	case n == -1:
	case n < -1:
		return "", nil, fmt.Errorf("invalid client_id length %d", n)
	case n > len(b):
		return "", nil, fmt.Errorf("client_id length %d exceeds the %d bytes left in the frame", n, len(b))
	default:
		id = string(b[:n])
		b = b[n:]
	}
	if !flexible {
		return id, b, nil
	}
	b, err := skipTaggedFields(b)
	return id, b, err
}

// skipTaggedFields skips a KIP-482 tagged-field section: uvarint count, then
// per field uvarint tag, uvarint size and size bytes.
func skipTaggedFields(b []byte) ([]byte, error) {
	count, b, err := uvarint(b)
	if err != nil {
		return nil, fmt.Errorf("header tagged fields count: %w", err)
	}
	for i := uint64(0); i < count; i++ {
		if _, b, err = uvarint(b); err != nil {
			return nil, fmt.Errorf("header tag %d: %w", i, err)
		}
		var size uint64
		if size, b, err = uvarint(b); err != nil {
			return nil, fmt.Errorf("header tag %d size: %w", i, err)
		}
		if size > uint64(len(b)) {
			return nil, fmt.Errorf("header tag %d size %d exceeds the %d bytes left", i, size, len(b))
		}
		b = b[size:]
	}
	return b, nil
}

func uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 || v > 1<<32-1 {
		return 0, nil, errors.New("bad unsigned varint")
	}
	return v, b[n:], nil
}
