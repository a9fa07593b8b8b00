// Package compress implements Kafka's record-batch codecs: gzip (1),
// snappy (2, raw block or xerial-framed as Java clients write it), lz4 (3,
// frame format) and zstd (4). Codec ids are the low three bits of a batch's
// attributes. Decoding is always bounded by a caller-given limit so that a
// small batch cannot expand into an unbounded allocation.
package compress

import "errors"

// ErrTooLarge is returned when decompressed data would exceed the limit.
var ErrTooLarge = errors.New("decompressed data exceeds the limit")

// ErrUnknownCodec is returned for codec ids other than 0–4.
var ErrUnknownCodec = errors.New("unknown compression codec")

// Decode decompresses src written with codec (Kafka codec id 1–4) and
// returns at most limit bytes; more gives ErrTooLarge. Codec 0 returns src.
func Decode(codec int8, src []byte, limit int) ([]byte, error) {
	return decode(codec, src, limit)
}

// Encode compresses src with codec (Kafka codec id 0–4), appending to dst.
func Encode(codec int8, dst, src []byte) ([]byte, error) {
	return encode(codec, dst, src)
}
