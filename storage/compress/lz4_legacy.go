package compress

// Message format v0 (magic 0) and Kafka's LZ4 frame header checksum.
//
// Kafka before 0.10 computed the LZ4 frame descriptor's header checksum
// (the HC byte, KIP-57) over the frame's magic number too, not only over
// the descriptor's FLG and BD bytes as the LZ4 frame specification says.
// Magic-0 messages keep that bug for compatibility: Kafka's
// KafkaLZ4BlockOutputStream writes the "broken" HC for them and its input
// stream ignores HC for them. Magic-1 and record batches use the correct
// checksum. Gregor's LZ4 decoder (pierrec/lz4) verifies HC, so magic-0
// input gets its HC corrected before decoding (equivalent to ignoring it),
// and magic-0 output gets the broken HC after encoding.

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// lz4FrameMagic is the LZ4 frame format's magic number (little endian).
const lz4FrameMagic = 0x184D2204

// lz4DescriptorEnd returns the index of the HC byte of an LZ4 frame: the
// descriptor is magic (4), FLG (1), BD (1), then an 8-byte content size
// when FLG bit 3 is set and a 4-byte dictionary id when FLG bit 0 is set.
func lz4DescriptorEnd(frame []byte) (int, error) {
	if len(frame) < 7 || binary.LittleEndian.Uint32(frame) != lz4FrameMagic {
		return 0, fmt.Errorf("%w: not an lz4 frame", ErrMalformed)
	}
	end := 6
	flg := frame[4]
	if flg&0x08 != 0 {
		end += 8
	}
	if flg&0x01 != 0 {
		end += 4
	}
	if len(frame) <= end {
		return 0, fmt.Errorf("%w: truncated lz4 frame descriptor", ErrMalformed)
	}
	return end, nil
}

// FixLegacyLZ4Checksum returns a copy of an LZ4 frame written for a
// magic-0 message, with its header checksum recomputed as the LZ4 frame
// format defines it (over FLG..end of descriptor), so a standard decoder
// accepts it whatever HC the old producer wrote (Kafka ignores HC for
// magic 0). Errors wrap ErrMalformed when frame is not an LZ4 frame.
func FixLegacyLZ4Checksum(frame []byte) ([]byte, error) {
	end, err := lz4DescriptorEnd(frame)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), frame...)
	out[end] = byte(xxh32(out[4:end], 0) >> 8)
	return out, nil
}

// BreakLegacyLZ4Checksum rewrites in place the header checksum of an LZ4
// frame produced by Encode into the one Kafka's magic-0 writer produces
// (xxh32 over the magic number and the descriptor), which clients of that
// era check. Errors wrap ErrMalformed when frame is not an LZ4 frame.
func BreakLegacyLZ4Checksum(frame []byte) error {
	end, err := lz4DescriptorEnd(frame)
	if err != nil {
		return err
	}
	frame[end] = byte(xxh32(frame[:end], 0) >> 8)
	return nil
}

// xxh32 primes (the xxHash specification).
const (
	xxPrime1 uint32 = 2654435761
	xxPrime2 uint32 = 2246822519
	xxPrime3 uint32 = 3266489917
	xxPrime4 uint32 = 668265263
	xxPrime5 uint32 = 374761393
)

// xxh32 is XXH32 for the short inputs of an LZ4 frame descriptor (at most
// 18 bytes, so the 16-byte stripe loop is included only for
// completeness). pierrec/lz4 has one but keeps it internal.
func xxh32(b []byte, seed uint32) uint32 {
	n := uint32(len(b))
	var h uint32
	if len(b) >= 16 {
		v1 := seed + xxPrime1 + xxPrime2
		v2 := seed + xxPrime2
		v3 := seed
		v4 := seed - xxPrime1
		for len(b) >= 16 {
			v1 = xxRound(v1, binary.LittleEndian.Uint32(b[0:]))
			v2 = xxRound(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = xxRound(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = xxRound(v4, binary.LittleEndian.Uint32(b[12:]))
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + xxPrime5
	}
	h += n
	for len(b) >= 4 {
		h += binary.LittleEndian.Uint32(b) * xxPrime3
		h = bits.RotateLeft32(h, 17) * xxPrime4
		b = b[4:]
	}
	for _, c := range b {
		h += uint32(c) * xxPrime5
		h = bits.RotateLeft32(h, 11) * xxPrime1
	}
	h ^= h >> 15
	h *= xxPrime2
	h ^= h >> 13
	h *= xxPrime3
	h ^= h >> 16
	return h
}

func xxRound(acc, in uint32) uint32 {
	acc += in * xxPrime2
	return bits.RotateLeft32(acc, 13) * xxPrime1
}
