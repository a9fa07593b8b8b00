// Package compress implements Kafka's record-batch codecs: gzip (1),
// snappy (2, raw block or xerial-framed as Java clients write it), lz4 (3,
// frame format) and zstd (4). Codec ids are the low three bits of a batch's
// attributes (compression.type). Decoding is always bounded by a
// caller-given limit and proceeds chunk by chunk, so a small batch cannot
// expand into an unbounded allocation (a decompression bomb gets
// ErrTooLarge after at most about limit bytes of output).
//
// All functions are safe for concurrent use; codec state (gzip, lz4, zstd
// readers and writers) is pooled.
package compress

import "errors"

// ErrTooLarge is returned when decompressed data would exceed the limit.
var ErrTooLarge = errors.New("decompressed data exceeds the limit")

// ErrUnknownCodec is returned for codec ids other than 0–4.
var ErrUnknownCodec = errors.New("unknown compression codec")

// ErrMalformed is wrapped by errors about damaged compressed data (a bad
// xerial frame, a stream that does not parse under its codec).
var ErrMalformed = errors.New("malformed compressed data")

// Decode decompresses src written with codec (Kafka codec id 1–4) and
// returns a new slice of at most limit bytes; more gives ErrTooLarge, damaged
// input an error wrapping ErrMalformed. Codec 0 returns src itself (still
// subject to limit).
func Decode(codec int8, src []byte, limit int) ([]byte, error) {
	if codec == None {
		if len(src) > limit {
			return nil, ErrTooLarge
		}
		return src, nil
	}
	return AppendDecode(codec, nil, src, limit)
}

// AppendDecode decompresses src written with codec and appends the result to
// dst, appending at most limit bytes (ErrTooLarge beyond). It lets callers
// reuse a buffer across batches. On error the returned slice is dst[:len(dst)]
// as given. Codec 0 appends src.
func AppendDecode(codec int8, dst, src []byte, limit int) ([]byte, error) {
	return appendDecode(codec, dst, src, limit)
}

// Encode compresses src with codec (Kafka codec id 0–4), appending to dst.
// Output formats are what the Java producer writes: gzip at the default
// level, snappy in xerial framing with 32 KiB blocks, lz4 frames with
// 64 KiB independent blocks, zstd at level 3 (compression.zstd.level's
// default).
func Encode(codec int8, dst, src []byte) ([]byte, error) {
	return encode(codec, dst, src)
}
