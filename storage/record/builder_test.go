package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/compress"
)

var allCodecs = []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}

// sampleRecords covers null vs empty keys and values, headers with null and
// empty values, negative and large timestamp deltas.
func sampleRecords() []BatchRecord {
	return []BatchRecord{
		{Key: []byte("abc"), Value: []byte("hello"), Headers: []RecordHeader{{Key: []byte("h1"), Value: []byte("v1")}}},
		{Key: nil, Value: []byte{}, TimestampDelta: 5},
		{Key: []byte{}, Value: nil, TimestampDelta: -3, Headers: []RecordHeader{{Key: []byte(""), Value: nil}, {Key: []byte("x"), Value: []byte{}}}},
		{Key: []byte("k"), Value: bytes.Repeat([]byte("v"), 300), TimestampDelta: 1 << 40},
	}
}

// kmsgRecords decodes the records section with franz-go's kmsg.Record.
func kmsgRecords(t *testing.T, body []byte, n int) []kmsg.Record {
	t.Helper()
	var out []kmsg.Record
	for i := 0; i < n; i++ {
		l, k := binary.Varint(body)
		if k <= 0 || int(l)+k > len(body) {
			t.Fatalf("record %d: bad length prefix", i)
		}
		var r kmsg.Record
		if err := r.ReadFrom(body[:k+int(l)]); err != nil {
			t.Fatalf("record %d: kmsg.Record.ReadFrom: %v", i, err)
		}
		out = append(out, r)
		body = body[k+int(l):]
	}
	if len(body) != 0 {
		t.Fatalf("%d bytes left after %d records", len(body), n)
	}
	return out
}

func TestBuildBatchDecodesWithKmsg(t *testing.T) {
	for _, codec := range allCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			recs := sampleRecords()
			opts := BatchOptions{
				BaseOffset:           42,
				PartitionLeaderEpoch: 7,
				BaseTimestamp:        1700000000000,
				Codec:                codec,
				Transactional:        true,
				Producer:             &Producer{ID: 1000, Epoch: 3, BaseSequence: 17},
			}
			b, err := BuildBatch(opts, recs)
			if err != nil {
				t.Fatal(err)
			}
			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(b); err != nil {
				t.Fatalf("kmsg.RecordBatch.ReadFrom: %v", err)
			}
			if kb.FirstOffset != 42 || kb.PartitionLeaderEpoch != 7 || kb.Magic != 2 ||
				int(kb.Length) != len(b)-12 || kb.LastOffsetDelta != 3 || kb.NumRecords != 4 ||
				kb.FirstTimestamp != 1700000000000 || kb.MaxTimestamp != 1700000000000+1<<40 ||
				kb.ProducerID != 1000 || kb.ProducerEpoch != 3 || kb.FirstSequence != 17 ||
				kb.Attributes != int16(codec)|AttrTransactional {
				t.Fatalf("header mismatch: %+v", kb)
			}
			// CRC computed independently of ComputeCRC.
			want := crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli))
			if uint32(kb.CRC) != want {
				t.Fatalf("crc %#x, want %#x", uint32(kb.CRC), want)
			}
			body := kb.Records
			if codec != CodecNone {
				// Decode with the codec library directly (via our Decode only for
				// dispatch; compress has its own cross-checks against references).
				body, err = compress.Decode(int8(codec), body, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
			}
			got := kmsgRecords(t, body, 4)
			for i, r := range got {
				w := recs[i]
				if r.OffsetDelta != int32(i) || r.TimestampDelta64 != w.TimestampDelta || r.Attributes != 0 {
					t.Errorf("record %d: delta/ts/attrs %d/%d/%d", i, r.OffsetDelta, r.TimestampDelta64, r.Attributes)
				}
				if (r.Key == nil) != (w.Key == nil) || !bytes.Equal(r.Key, w.Key) {
					t.Errorf("record %d: key %q (nil=%v), want %q (nil=%v)", i, r.Key, r.Key == nil, w.Key, w.Key == nil)
				}
				if (r.Value == nil) != (w.Value == nil) || !bytes.Equal(r.Value, w.Value) {
					t.Errorf("record %d: value nil=%v, want nil=%v", i, r.Value == nil, w.Value == nil)
				}
				if len(r.Headers) != len(w.Headers) {
					t.Fatalf("record %d: %d headers", i, len(r.Headers))
				}
				for j, h := range r.Headers {
					if h.Key != string(w.Headers[j].Key) || (h.Value == nil) != (w.Headers[j].Value == nil) || !bytes.Equal(h.Value, w.Headers[j].Value) {
						t.Errorf("record %d header %d: %q=%q", i, j, h.Key, h.Value)
					}
				}
			}
		})
	}
}

func TestBuildBatchRoundTripsThroughRecords(t *testing.T) {
	for _, codec := range allCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			recs := sampleRecords()
			b, err := BuildBatch(BatchOptions{BaseOffset: 100, BaseTimestamp: 1000, Codec: codec}, recs)
			if err != nil {
				t.Fatal(err)
			}
			h, batch, err := Validate(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(batch) != len(b) || h.Codec() != codec || h.ProducerID != -1 || h.ProducerEpoch != -1 || h.BaseSequence != -1 {
				t.Fatalf("header %+v", h)
			}
			if err := ValidateRecords(h, batch, 1<<20, false); err != nil {
				t.Fatal(err)
			}
			i := 0
			err = Records(h, batch, 1<<20, func(r *Record) error {
				w := recs[i]
				if r.Offset(&h) != 100+int64(i) || r.Timestamp(&h) != 1000+w.TimestampDelta {
					t.Errorf("record %d: offset %d ts %d", i, r.Offset(&h), r.Timestamp(&h))
				}
				if (r.Key == nil) != (w.Key == nil) || !bytes.Equal(r.Key, w.Key) || (r.Value == nil) != (w.Value == nil) || !bytes.Equal(r.Value, w.Value) {
					t.Errorf("record %d: key/value mismatch", i)
				}
				if len(r.Headers) != len(w.Headers) {
					t.Errorf("record %d: %d headers", i, len(r.Headers))
				}
				i++
				return nil
			})
			if err != nil || i != 4 {
				t.Fatalf("Records: %v after %d", err, i)
			}
		})
	}
}

func TestBuildBatchLogAppendTimeAndControl(t *testing.T) {
	b, err := BuildBatch(BatchOptions{
		BaseTimestamp: 10, LogAppendTime: true, AppendTime: 99,
		Control: true, Transactional: true,
		Producer: &Producer{ID: 5, Epoch: 1, BaseSequence: -1},
	}, []BatchRecord{EndTxnMarker(true, 12)})
	if err != nil {
		t.Fatal(err)
	}
	// Markers carry baseSequence -1: not a client batch, so Validate's
	// client rule refuses it while the integrity check accepts it.
	if _, _, err := Validate(b); !IsInvalid(err) {
		t.Fatalf("Validate of a marker: %v", err)
	}
	h, batch, err := ValidateIntegrity(b)
	if err != nil {
		t.Fatal(err)
	}
	if !h.IsLogAppendTime() || !h.IsControl() || !h.IsTransactional() || h.MaxTimestamp != 99 || h.BaseTimestamp != 10 {
		t.Fatalf("header %+v", h)
	}
	err = Records(h, batch, 1<<10, func(r *Record) error {
		var k kmsg.ControlRecordKey
		if err := k.ReadFrom(r.Key); err != nil {
			return err
		}
		var v kmsg.EndTxnMarker
		if err := v.ReadFrom(r.Value); err != nil {
			return err
		}
		if k.Type != kmsg.ControlRecordKeyTypeCommit || v.CoordinatorEpoch != 12 || r.Timestamp(&h) != 99 {
			return fmt.Errorf("control record %+v %+v", k, v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBuildBatchKeepOffsetDeltas(t *testing.T) {
	recs := []BatchRecord{{Key: []byte("a"), OffsetDelta: 1}, {Key: []byte("b"), OffsetDelta: 4}}
	b, err := BuildBatch(BatchOptions{BaseOffset: 10, KeepOffsetDeltas: true, LastOffsetDelta: 6}, recs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.LastOffsetDelta != 6 || h.RecordCount != 2 || ComputeCRC(b) != h.CRC {
		t.Fatalf("header %+v", h)
	}
	var offs []int64
	if err := Records(h, b, 1<<10, func(r *Record) error { offs = append(offs, r.Offset(&h)); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(offs) != "[11 14]" {
		t.Fatalf("offsets %v", offs)
	}
	// An empty batch keeps its range (compaction retains producer state).
	e, err := BuildBatch(BatchOptions{BaseOffset: 10, KeepOffsetDeltas: true, LastOffsetDelta: 6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if eh, _ := ParseHeader(e); eh.RecordCount != 0 || eh.LastOffsetDelta != 6 || eh.MaxTimestamp != NoTimestamp || len(e) != HeaderSize {
		t.Fatalf("empty batch %+v", eh)
	}
}

func TestBuildBatchBadInput(t *testing.T) {
	cases := map[string]struct {
		opts BatchOptions
		recs []BatchRecord
	}{
		"no records":        {BatchOptions{}, nil},
		"unknown codec":     {BatchOptions{Codec: 5}, []BatchRecord{{}}},
		"null header key":   {BatchOptions{}, []BatchRecord{{Headers: []RecordHeader{{Key: nil}}}}},
		"deltas not rising": {BatchOptions{KeepOffsetDeltas: true}, []BatchRecord{{OffsetDelta: 2}, {OffsetDelta: 2}}},
	}
	for name, c := range cases {
		dst := []byte("keep")
		out, err := AppendBatch(dst, c.opts, c.recs)
		if !errors.Is(err, ErrBadBatchInput) {
			t.Errorf("%s: err %v", name, err)
		}
		if string(out) != "keep" {
			t.Errorf("%s: dst changed to %q", name, out)
		}
	}
}

func TestAppendBatchAppends(t *testing.T) {
	a, _ := BuildBatch(BatchOptions{BaseOffset: 0}, []BatchRecord{{Value: []byte("x")}})
	both, err := AppendBatch(append([]byte(nil), a...), BatchOptions{BaseOffset: 1, Codec: CodecZstd}, []BatchRecord{{Value: []byte("y")}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(both[:len(a)], a) {
		t.Fatal("first batch changed")
	}
	h, _, err := Validate(both[len(a):])
	if err != nil || h.BaseOffset != 1 {
		t.Fatalf("second batch: %+v %v", h, err)
	}
}

func TestBuildBatchUncompressedAllocs(t *testing.T) {
	recs := sampleRecords()
	buf := make([]byte, 0, 4096)
	n := testing.AllocsPerRun(100, func() {
		var err error
		if _, err = AppendBatch(buf[:0], BatchOptions{}, recs); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocs per uncompressed AppendBatch into a big enough buffer", n)
	}
}
