package storage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/compress"
	"gregor/storage/record"
)

// batchSpec describes a test batch built with franz-go's kmsg encoders.
type batchSpec struct {
	n         int   // records
	valueSize int   // bytes per value
	baseTs    int64 // ms; record i has baseTs+i
	codec     record.Codec
	nilKeys   bool
	tag       byte // fills values, to tell batches apart
}

// makeBatch encodes a magic-2 batch at base offset 0 with kmsg (franz-go's
// wire encoding), computing the CRC with record.ComputeCRC.
func makeBatch(t testing.TB, s batchSpec) []byte {
	t.Helper()
	var recs []byte
	for i := 0; i < s.n; i++ {
		r := kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Value: bytes.Repeat([]byte{s.tag + byte(i)}, s.valueSize)}
		if !s.nilKeys {
			r.Key = []byte(fmt.Sprintf("k%d", i))
		}
		body := r.AppendTo(nil) // Length 0 encodes as one varint byte
		r.Length = int32(len(body) - 1)
		recs = r.AppendTo(recs)
	}
	if s.codec != record.CodecNone {
		var err error
		if recs, err = compress.Encode(int8(s.codec), nil, recs); err != nil {
			t.Fatal(err)
		}
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, Attributes: int16(s.codec),
		LastOffsetDelta: int32(s.n - 1), FirstTimestamp: s.baseTs, MaxTimestamp: s.baseTs + int64(s.n-1),
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(s.n), Records: recs,
	}
	b.Length = int32(record.HeaderSize - record.LogOverhead + len(recs))
	out := b.AppendTo(nil)
	crc := record.ComputeCRC(out)
	out[record.OffCRC], out[record.OffCRC+1], out[record.OffCRC+2], out[record.OffCRC+3] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	return out
}

// testConfig is DefaultLogConfig with small segments and immediate deletes.
func testConfig() LogConfig {
	c := DefaultLogConfig()
	c.SegmentBytes = 4096
	c.IndexIntervalBytes = 256
	c.FileDeleteDelayMs = 0
	c.SkipRollFsync = true
	return c
}

func openTestLog(t testing.TB, dir string, cfg LogConfig, opts OpenOptions) *Log {
	t.Helper()
	l, err := OpenLog(dir, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func newTestLog(t testing.TB, cfg LogConfig) *Log {
	t.Helper()
	l := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{})
	t.Cleanup(func() { l.Close() })
	return l
}

// appendN appends count batches of n records each, batch i with timestamps
// from baseTs+i*1000, and returns the stored bytes of each batch.
func appendN(t testing.TB, l *Log, count, n, valueSize int, baseTs int64) [][]byte {
	t.Helper()
	var out [][]byte
	for i := 0; i < count; i++ {
		b := makeBatch(t, batchSpec{n: n, valueSize: valueSize, baseTs: baseTs + int64(i)*1000, tag: byte(i)})
		if _, err := l.Append(b, AppendOptions{LeaderEpoch: 0, LogAppendTime: -1}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		out = append(out, b)
	}
	return out
}

// readAll reads FetchData's regions back with pread and releases it.
func readAll(t testing.TB, fd FetchData) []byte {
	t.Helper()
	defer fd.Release()
	var out []byte
	for _, r := range fd.Regions {
		buf := make([]byte, r.Len)
		if _, err := r.File.ReadAt(buf, r.Pos); err != nil {
			t.Fatalf("pread %d@%d: %v", r.Len, r.Pos, err)
		}
		out = append(out, buf...)
	}
	return out
}

// splitBatches parses concatenated batches, validating each.
func splitBatches(t testing.TB, b []byte) []record.Header {
	t.Helper()
	var hs []record.Header
	for len(b) > 0 {
		h, bb, err := record.Validate(b)
		if err != nil {
			t.Fatalf("batch %d: %v", len(hs), err)
		}
		hs = append(hs, h)
		b = b[len(bb):]
	}
	return hs
}

func fileSize(t testing.TB, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
