package compress

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Kafka codec ids.
const (
	None   int8 = 0
	Gzip   int8 = 1
	Snappy int8 = 2
	LZ4    int8 = 3
	Zstd   int8 = 4
)

var (
	zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
)

func decode(codec int8, src []byte, limit int) ([]byte, error) {
	switch codec {
	case None:
		if len(src) > limit {
			return nil, ErrTooLarge
		}
		return src, nil
	case Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		return readCapped(zr, limit)
	case Snappy:
		// TODO(codec): bound the xerial path chunk by chunk instead of after the fact.
		out, err := xerial.Decode(src)
		if err != nil {
			return nil, err
		}
		if len(out) > limit {
			return nil, ErrTooLarge
		}
		return out, nil
	case LZ4:
		return readCapped(lz4.NewReader(bytes.NewReader(src)), limit)
	case Zstd:
		out, err := zstdDec.DecodeAll(src, nil)
		if err != nil {
			return nil, err
		}
		if len(out) > limit {
			return nil, ErrTooLarge
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownCodec, codec)
}

// readCapped reads r to EOF, failing once more than limit bytes come out.
func readCapped(r io.Reader, limit int) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(limit) {
		return nil, ErrTooLarge
	}
	return buf.Bytes(), nil
}

func encode(codec int8, dst, src []byte) ([]byte, error) {
	switch codec {
	case None:
		return append(dst, src...), nil
	case Gzip:
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return append(dst, buf.Bytes()...), nil
	case Snappy:
		return append(dst, snappy.Encode(nil, src)...), nil
	case LZ4:
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return append(dst, buf.Bytes()...), nil
	case Zstd:
		return zstdEnc.EncodeAll(src, dst), nil
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownCodec, codec)
}
