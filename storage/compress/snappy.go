package compress

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/klauspost/compress/snappy"
)

// Kafka's snappy codec comes in two shapes. The Java client (snappy-java's
// SnappyOutputStream) writes the xerial framing: a 16-byte header (magic
// "\x82SNAPPY\x00", version 1, compatible version 1) then blocks of
// [int32 big-endian compressed length][raw snappy block], each block at
// most 32 KiB uncompressed. librdkafka and franz-go may write one raw
// snappy block instead. Decoders must accept both.

var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderLen = 16
	xerialBlockSize = 32 << 10
)

// unsnappy decodes raw or xerial-framed snappy into dst. Every block's
// decoded length is read from its preamble and checked against the
// remaining budget before any memory is reserved for it.
func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	if len(src) >= xerialHeaderLen && bytes.Equal(src[:8], xerialMagic) {
		return unxerial(dst, src, limit)
	}
	return appendSnappyBlock(dst, src, limit)
}

func appendSnappyBlock(dst, block []byte, budget int) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return dst, malformed("snappy", err)
	}
	if n > budget {
		return dst, ErrTooLarge
	}
	dst = slices.Grow(dst, n)
	if _, err := snappy.Decode(dst[len(dst):len(dst)+n], block); err != nil {
		return dst, malformed("snappy", err)
	}
	return dst[:len(dst)+n], nil
}

func unxerial(dst, src []byte, limit int) ([]byte, error) {
	start := len(dst)
	p := src[xerialHeaderLen:]
	for len(p) > 0 {
		// snappy-java accepts concatenated streams: a second header may
		// appear where a block length is expected.
		if len(p) >= xerialHeaderLen && bytes.Equal(p[:8], xerialMagic) {
			p = p[xerialHeaderLen:]
			continue
		}
		if len(p) < 4 {
			return dst, fmt.Errorf("%w: snappy: %d stray bytes after the last xerial block", ErrMalformed, len(p))
		}
		size := binary.BigEndian.Uint32(p)
		p = p[4:]
		if uint64(size) > uint64(len(p)) {
			return dst, fmt.Errorf("%w: snappy: xerial block of %d bytes overruns the %d left", ErrMalformed, size, len(p))
		}
		var err error
		if dst, err = appendSnappyBlock(dst, p[:size], limit-(len(dst)-start)); err != nil {
			return dst, err
		}
		p = p[size:]
	}
	return dst, nil
}

// xerialAppend appends src snappy-compressed in xerial framing, the form
// the Java producer writes (and so every Kafka consumer reads).
func xerialAppend(dst, src []byte) []byte {
	dst = append(dst, xerialMagic...)
	dst = binary.BigEndian.AppendUint32(dst, 1) // version
	dst = binary.BigEndian.AppendUint32(dst, 1) // minimum compatible version
	for len(src) > 0 {
		blk := src[:min(len(src), xerialBlockSize)]
		src = src[len(blk):]
		at := len(dst)
		dst = slices.Grow(dst, 4+snappy.MaxEncodedLen(len(blk)))
		enc := snappy.Encode(dst[at+4:cap(dst)], blk)
		binary.BigEndian.PutUint32(dst[at:at+4], uint32(len(enc)))
		dst = dst[:at+4+len(enc)]
	}
	return dst
}
