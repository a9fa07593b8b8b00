package record

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kmsgRecord encodes one record with franz-go's kmsg.Record, filling in
// its length prefix.
func kmsgRecord(r kmsg.Record) []byte {
	r.Length = 0
	body := r.AppendTo(nil)[1:] // a zero length encodes as one byte
	r.Length = int32(len(body))
	return r.AppendTo(nil)
}

// kmsgBatchBytes encodes a batch with franz-go: records via kmsg.Record,
// compression via kgo's producer compressor, the batch via
// kmsg.RecordBatch.AppendTo; then it fills batchLength and the CRC-32C.
func kmsgBatchBytes(tb testing.TB, codec Codec, recs []kmsg.Record, edit func(*kmsg.RecordBatch)) []byte {
	tb.Helper()
	var raw []byte
	for _, r := range recs {
		raw = append(raw, kmsgRecord(r)...)
	}
	return kmsgBatchFromRaw(tb, codec, raw, len(recs), edit)
}

func kmsgBatchFromRaw(tb testing.TB, codec Codec, raw []byte, n int, edit func(*kmsg.RecordBatch)) []byte {
	tb.Helper()
	if codec != CodecNone {
		kc := map[Codec]kgo.CompressionCodec{
			CodecGzip: kgo.GzipCompression(), CodecSnappy: kgo.SnappyCompression(),
			CodecLZ4: kgo.Lz4Compression(), CodecZstd: kgo.ZstdCompression(),
		}[codec]
		comp, err := kgo.DefaultCompressor(kc)
		if err != nil {
			tb.Fatal(err)
		}
		out, used := comp.Compress(new(bytes.Buffer), raw)
		if Codec(used) != codec {
			tb.Fatalf("kgo compressed with %d", used)
		}
		raw = append([]byte(nil), out...)
	}
	kb := kmsg.RecordBatch{
		FirstOffset:          0,
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           int16(codec),
		LastOffsetDelta:      int32(n - 1),
		FirstTimestamp:       1700000000000,
		MaxTimestamp:         1700000000000 + int64(n-1),
		ProducerID:           1000,
		ProducerEpoch:        0,
		FirstSequence:        0,
		NumRecords:           int32(n),
		Records:              raw,
	}
	if edit != nil {
		edit(&kb)
	}
	b := kb.AppendTo(nil)
	fixBatch(b)
	return b
}

// fixBatch rewrites batchLength to cover b and recomputes the CRC-32C, so a
// test can break one rule without also breaking the checksum.
func fixBatch(b []byte) {
	binary.BigEndian.PutUint32(b[OffBatchLength:], uint32(len(b)-LogOverhead))
	binary.BigEndian.PutUint32(b[OffCRC:], crc32.Checksum(b[OffAttributes:], crc32.MakeTable(crc32.Castagnoli)))
}

// goldenRecords are three records as a producer would send them.
func goldenRecords() []kmsg.Record {
	return []kmsg.Record{
		{OffsetDelta: 0, Key: []byte("abc"), Value: []byte("hello"), Headers: []kmsg.Header{{Key: "h1", Value: []byte("v")}}},
		{OffsetDelta: 1, TimestampDelta64: 1, Key: []byte("k2"), Value: nil},
		{OffsetDelta: 2, TimestampDelta64: 2, Key: []byte{}, Value: []byte{}},
	}
}
