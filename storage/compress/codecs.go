package compress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Kafka codec ids (the compression.type values and attribute bits).
const (
	None   int8 = 0
	Gzip   int8 = 1
	Snappy int8 = 2
	LZ4    int8 = 3
	Zstd   int8 = 4
)

// zstd frames declare a window (history) size and the decoder reserves it
// up front, so a 10 KiB frame can claim 128 MiB. The window a decode may use
// is therefore tied to the caller's limit: up to zstdSmallWindow (8 MiB,
// what Java producers use at every level up to 19) always, up to
// zstdMaxWindow (128 MiB, the reference decoder's default limit
// ZSTD_WINDOWLOG_LIMIT_DEFAULT = 27, reached only by the ultra levels 20–22)
// only when the limit itself exceeds 8 MiB. A larger window is ErrTooLarge.
const (
	zstdSmallWindow = 8 << 20
	zstdMaxWindow   = 128 << 20
)

func appendDecode(codec int8, dst, src []byte, limit int) ([]byte, error) {
	if limit < 0 {
		limit = 0
	}
	start := len(dst)
	var err error
	switch codec {
	case None:
		if len(src) > limit {
			return dst, ErrTooLarge
		}
		return append(dst, src...), nil
	case Gzip, Snappy, LZ4, Zstd:
		if len(src) == 0 {
			// Every codec's output has a header; an empty records section
			// claiming compression is damage, not an empty batch.
			return dst, fmt.Errorf("%w: empty %s data", ErrMalformed, codecName(codec))
		}
	}
	switch codec {
	case Gzip:
		dst, err = gunzip(dst, src, limit)
	case Snappy:
		dst, err = unsnappy(dst, src, limit)
	case LZ4:
		dst, err = unlz4(dst, src, limit)
	case Zstd:
		dst, err = unzstd(dst, src, limit)
	default:
		return dst, fmt.Errorf("%w: %d", ErrUnknownCodec, codec)
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

func encode(codec int8, dst, src []byte) ([]byte, error) {
	switch codec {
	case None:
		return append(dst, src...), nil
	case Gzip:
		return gzipAppend(dst, src)
	case Snappy:
		return xerialAppend(dst, src), nil
	case LZ4:
		return lz4Append(dst, src)
	case Zstd:
		return zstdEnc.EncodeAll(src, dst), nil
	}
	return dst, fmt.Errorf("%w: %d", ErrUnknownCodec, codec)
}

func codecName(c int8) string {
	switch c {
	case Gzip:
		return "gzip"
	case Snappy:
		return "snappy"
	case LZ4:
		return "lz4"
	case Zstd:
		return "zstd"
	}
	return "none"
}

// malformed wraps a codec library error so callers can match ErrMalformed.
func malformed(codec string, err error) error {
	if errors.Is(err, ErrTooLarge) {
		return err
	}
	return fmt.Errorf("%w: %s: %v", ErrMalformed, codec, err)
}

// readAppend reads r to EOF appending to dst, failing with ErrTooLarge as
// soon as more than limit bytes came out. The buffer grows geometrically,
// never beyond limit+1 new bytes, so memory stays bounded by the limit.
func readAppend(dst []byte, r io.Reader, limit int) ([]byte, error) {
	start := len(dst)
	for {
		got := len(dst) - start
		if got > limit {
			return dst, ErrTooLarge
		}
		if len(dst) == cap(dst) {
			grow := min(max(got, 4096), limit+1-got)
			dst = slices.Grow(dst, grow)
		}
		room := min(cap(dst)-len(dst), limit+1-got)
		n, err := r.Read(dst[len(dst) : len(dst)+room])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			if len(dst)-start > limit {
				return dst, ErrTooLarge
			}
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// ---- gzip ----

type gzipDec struct {
	src bytes.Reader
	zr  gzip.Reader // the zero value is usable after Reset
}

var gzipDecPool = sync.Pool{New: func() any { return new(gzipDec) }}

func gunzip(dst, src []byte, limit int) ([]byte, error) {
	d := gzipDecPool.Get().(*gzipDec)
	defer func() { d.src.Reset(nil); gzipDecPool.Put(d) }()
	d.src.Reset(src)
	if err := d.zr.Reset(&d.src); err != nil {
		return dst, malformed("gzip", err)
	}
	out, err := readAppend(dst, &d.zr, limit)
	if err != nil {
		return out, malformed("gzip", err)
	}
	return out, nil
}

// appendWriter is an io.Writer appending to a byte slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// streamWriter is a pooled streaming compressor (gzip, lz4) that can be
// pointed at a new destination.
type streamWriter interface {
	io.WriteCloser
	Reset(w io.Writer)
}

// streamAppend compresses src through zw into a complete frame appended to
// dst, using out as zw's destination. On error dst is returned unchanged
// in length.
func streamAppend(out *appendWriter, zw streamWriter, dst, src []byte) ([]byte, error) {
	out.b = dst
	zw.Reset(out)
	if _, err := zw.Write(src); err != nil {
		return dst, err
	}
	if err := zw.Close(); err != nil {
		return dst, err
	}
	return out.b, nil
}

type gzipEnc struct {
	out appendWriter
	zw  *gzip.Writer
}

var gzipEncPool = sync.Pool{New: func() any {
	e := new(gzipEnc)
	e.zw, _ = gzip.NewWriterLevel(&e.out, gzip.DefaultCompression) // a valid level never errors
	return e
}}

func gzipAppend(dst, src []byte) ([]byte, error) {
	e := gzipEncPool.Get().(*gzipEnc)
	defer func() { e.out.b = nil; gzipEncPool.Put(e) }()
	return streamAppend(&e.out, e.zw, dst, src)
}

// ---- lz4 (frame format, KIP-57) ----

type lz4Dec struct {
	src bytes.Reader
	zr  *lz4.Reader
}

var lz4DecPool = sync.Pool{New: func() any { return &lz4Dec{zr: lz4.NewReader(nil)} }}

func unlz4(dst, src []byte, limit int) ([]byte, error) {
	d := lz4DecPool.Get().(*lz4Dec)
	defer func() { d.src.Reset(nil); d.zr.Reset(nil); lz4DecPool.Put(d) }()
	d.src.Reset(src)
	d.zr.Reset(&d.src)
	out, err := readAppend(dst, d.zr, limit)
	if err != nil {
		return out, malformed("lz4", err)
	}
	return out, nil
}

type lz4Enc struct {
	out appendWriter
	zw  *lz4.Writer
}

var lz4EncPool = sync.Pool{New: func() any {
	e := &lz4Enc{zw: lz4.NewWriter(nil)}
	// 64 KiB independent blocks as Kafka's KafkaLZ4BlockOutputStream; one
	// goroutine (the default concurrency would spawn workers per write).
	_ = e.zw.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ConcurrencyOption(1))
	return e
}}

func lz4Append(dst, src []byte) ([]byte, error) {
	e := lz4EncPool.Get().(*lz4Enc)
	defer func() { e.out.b = nil; e.zw.Reset(nil); lz4EncPool.Put(e) }()
	return streamAppend(&e.out, e.zw, dst, src)
}

// ---- zstd (KIP-110) ----

// zstd decoders are used in streaming mode so output can be cut at the
// limit (DecodeAll would materialise the whole frame first). With
// concurrency 1 a streaming decoder runs synchronously and owns no
// goroutines, so pooling it through sync.Pool without Close is safe.
type zstdDec struct {
	src bytes.Reader
	zr  *zstd.Decoder
}

func newZstdPool(maxWindow uint64) *sync.Pool {
	return &sync.Pool{New: func() any {
		zr, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxWindow))
		if err != nil {
			panic(err) // constant, valid options
		}
		return &zstdDec{zr: zr}
	}}
}

var (
	zstdSmallPool = newZstdPool(zstdSmallWindow)
	zstdLargePool = newZstdPool(zstdMaxWindow)
)

func unzstd(dst, src []byte, limit int) ([]byte, error) {
	pool := zstdSmallPool
	if limit > zstdSmallWindow {
		pool = zstdLargePool
	}
	d := pool.Get().(*zstdDec)
	defer func() { d.src.Reset(nil); pool.Put(d) }()
	d.src.Reset(src)
	if err := d.zr.Reset(&d.src); err != nil {
		return dst, zstdErr(err)
	}
	out, err := readAppend(dst, d.zr, limit)
	if err != nil {
		return out, zstdErr(err)
	}
	return out, nil
}

func zstdErr(err error) error {
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return fmt.Errorf("%w: zstd: %v", ErrTooLarge, err)
	}
	return malformed("zstd", err)
}

// zstdEnc is shared: EncodeAll is safe for concurrent use. Level 3 is
// Kafka's default compression.zstd.level (SpeedDefault in klauspost terms).
var zstdEnc = func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic(err) // constant, valid options
	}
	return e
}()
