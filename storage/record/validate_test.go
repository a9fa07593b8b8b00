package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/compress"
)

// Batches encoded by franz-go decode to exactly the fields it was given.
func TestGoldenFranzGoBatches(t *testing.T) {
	for _, codec := range allCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			want := goldenRecords()
			b := kmsgBatchBytes(t, codec, want, func(kb *kmsg.RecordBatch) {
				kb.FirstOffset = 500
				kb.ProducerEpoch = 4
				kb.FirstSequence = 9
			})
			b = append(b, 0xde, 0xad) // the next batch's first bytes: Validate must stop at Size()
			h, batch, err := Validate(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(batch) != len(b)-2 || h.BaseOffset != 500 || h.LastOffset() != 502 || h.NextOffset() != 503 ||
				h.Codec() != codec || h.ProducerID != 1000 || h.ProducerEpoch != 4 || h.BaseSequence != 9 ||
				h.LastSequence() != 11 || h.PartitionLeaderEpoch != -1 || h.MaxTimestamp != 1700000000002 || h.RecordCount != 3 {
				t.Fatalf("header %+v", h)
			}
			if err := ValidateRecords(h, batch, 1<<20, true); err != nil {
				t.Fatal(err)
			}
			i := 0
			err = Records(h, batch, 1<<20, func(r *Record) error {
				w := want[i]
				if r.Offset(&h) != 500+int64(i) || r.Timestamp(&h) != 1700000000000+w.TimestampDelta64 ||
					!bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) ||
					!bytes.Equal(r.Value, w.Value) || (r.Value == nil) != (w.Value == nil) || len(r.Headers) != len(w.Headers) {
					t.Errorf("record %d: %+v", i, r)
				}
				for j := range r.Headers {
					if string(r.Headers[j].Key) != w.Headers[j].Key || !bytes.Equal(r.Headers[j].Value, w.Headers[j].Value) {
						t.Errorf("record %d header %d", i, j)
					}
				}
				i++
				return nil
			})
			if err != nil || i != 3 {
				t.Fatalf("Records: %v after %d", err, i)
			}
		})
	}
}

// rawRecord hand-encodes a record body for cases kmsg cannot express
// (wrong lengths, stray bytes); fields are zigzag varints as on the wire.
func rawRecord(parts ...[]byte) []byte {
	var body []byte
	for _, p := range parts {
		body = append(body, p...)
	}
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

func vi(v int64) []byte { return binary.AppendVarint(nil, v) }

func TestValidateErrors(t *testing.T) {
	good := func() []byte { return kmsgBatchBytes(t, CodecNone, goldenRecords(), nil) }
	type check struct {
		corrupt bool   // *CorruptError (else *InvalidError)
		records bool   // detected by ValidateRecords (else by Validate)
		index   int    // the (first) record at fault: InvalidError.RecordErrors, or -1
		substr  string // in the message
	}
	cases := []struct {
		name    string
		b       func() []byte
		compact bool
		want    check
	}{
		{"bad magic", func() []byte { b := good(); b[OffMagic] = 1; return b }, false, check{corrupt: true, substr: "magic"}},
		{"bad crc", func() []byte { b := good(); b[len(b)-1] ^= 1; return b }, false, check{corrupt: true, substr: "crc mismatch"}},
		{"truncated header", func() []byte { return good()[:40] }, false, check{corrupt: true, substr: "truncated"}},
		{"truncated body", func() []byte { b := good(); return b[:len(b)-1] }, false, check{corrupt: true, substr: "truncated"}},
		{"batch length below header", func() []byte {
			b := good()
			binary.BigEndian.PutUint32(b[OffBatchLength:], 48)
			return b
		}, false, check{corrupt: true, substr: "shorter than the header"}},
		{"zero count", func() []byte {
			return kmsgBatchBytes(t, CodecNone, nil, func(kb *kmsg.RecordBatch) { kb.LastOffsetDelta = 0 })
		}, false, check{index: -1, substr: "count"}},
		{"negative last offset delta", func() []byte {
			return kmsgBatchBytes(t, CodecNone, goldenRecords(), func(kb *kmsg.RecordBatch) { kb.LastOffsetDelta = -1 })
		}, false, check{index: -1, substr: "offset range"}},
		{"count vs lastOffsetDelta", func() []byte {
			return kmsgBatchBytes(t, CodecNone, goldenRecords(), func(kb *kmsg.RecordBatch) { kb.NumRecords = 2 })
		}, false, check{index: -1, substr: "inconsistent"}},
		{"producer id without sequence", func() []byte {
			return kmsgBatchBytes(t, CodecNone, goldenRecords(), func(kb *kmsg.RecordBatch) { kb.FirstSequence = -1 })
		}, false, check{index: -1, substr: "sequence"}},
		{"fewer records than count", func() []byte {
			return kmsgBatchBytes(t, CodecNone, goldenRecords()[:2], func(kb *kmsg.RecordBatch) { kb.NumRecords, kb.LastOffsetDelta = 3, 2 })
		}, false, check{records: true, index: -1, substr: "holds 2"}},
		{"offset delta gap", func() []byte {
			r := goldenRecords()
			r[1].OffsetDelta, r[2].OffsetDelta = 2, 3
			return kmsgBatchBytes(t, CodecNone, r, nil)
		}, false, check{records: true, index: 1, substr: "offset delta 2, want 1"}},
		{"missing key on compacted topic", func() []byte {
			r := goldenRecords()
			r[2].Key = nil
			return kmsgBatchBytes(t, CodecNone, r, nil)
		}, true, check{records: true, index: 2, substr: "without key"}},
		{"trailing garbage", func() []byte {
			b := append(good(), 0x02, 0x00)
			fixBatch(b)
			return b
		}, false, check{records: true, index: 3, substr: "trailing"}},
		{"record overrunning the batch", func() []byte {
			raw := append(kmsgRecord(goldenRecords()[0]), rawRecord([]byte{0}, vi(0), vi(1), vi(-1), vi(-1), vi(0))...)
			raw = append(raw, binary.AppendVarint(nil, 100)...) // third record claims 100 bytes
			raw = append(raw, 0, 0)
			return kmsgBatchFromRaw(t, CodecNone, raw, 3, nil)
		}, false, check{records: true, index: 2, substr: "overruns"}},
		{"stray bytes inside a record", func() []byte {
			raw := rawRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(0), []byte{7})
			return kmsgBatchFromRaw(t, CodecNone, raw, 1, nil)
		}, false, check{records: true, index: 0, substr: "stray"}},
		{"null header key", func() []byte {
			raw := rawRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(1), vi(-1), vi(-1))
			return kmsgBatchFromRaw(t, CodecNone, raw, 1, nil)
		}, false, check{records: true, index: 0, substr: "header key"}},
		{"negative header count", func() []byte {
			raw := rawRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(-2))
			return kmsgBatchFromRaw(t, CodecNone, raw, 1, nil)
		}, false, check{records: true, index: 0, substr: "header count"}},
		{"key length past the record", func() []byte {
			raw := rawRecord([]byte{0}, vi(0), vi(0), vi(50), []byte("ab"))
			return kmsgBatchFromRaw(t, CodecNone, raw, 1, nil)
		}, false, check{records: true, index: 0, substr: "bad key"}},
		{"compressed garbage", func() []byte {
			b := kmsgBatchFromRaw(t, CodecNone, []byte("definitely not zstd"), 1, nil)
			b[OffAttributes+1] |= byte(CodecZstd)
			fixBatch(b)
			return b
		}, false, check{corrupt: true, records: true, substr: "zstd decompression"}},
		{"unknown codec", func() []byte {
			b := good()
			b[OffAttributes+1] |= 6
			fixBatch(b)
			return b
		}, false, check{corrupt: true, records: true, substr: "decompression"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.b()
			orig := append([]byte(nil), b...)
			h, batch, err := Validate(b)
			if c.want.records {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				err = ValidateRecords(h, batch, 1<<20, c.compact)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want.substr) {
				t.Errorf("error %q lacks %q", err, c.want.substr)
			}
			if c.want.corrupt {
				if !IsCorrupt(err) || IsInvalid(err) {
					t.Errorf("want *CorruptError, got %T %v", err, err)
				}
			} else {
				var ie *InvalidError
				if !errors.As(err, &ie) || IsCorrupt(err) {
					t.Fatalf("want *InvalidError, got %T %v", err, err)
				}
				index := -1
				if re := ie.RecordErrors(); len(re) > 0 {
					index = re[0].Index
				}
				if index != c.want.index {
					t.Errorf("record index %d, want %d", index, c.want.index)
				}
			}
			if !bytes.Equal(b, orig) {
				t.Error("validation modified the batch")
			}
		})
	}
}

func TestValidateRecordsDecompressionLimit(t *testing.T) {
	recs := []BatchRecord{{Key: []byte("k"), Value: bytes.Repeat([]byte("x"), 64<<10)}}
	for _, codec := range allCodecs[1:] {
		b, err := BuildBatch(BatchOptions{Codec: codec}, recs)
		if err != nil {
			t.Fatal(err)
		}
		h, batch, err := Validate(b)
		if err != nil {
			t.Fatal(err)
		}
		err = ValidateRecords(h, batch, 32<<10, false)
		if !IsCorrupt(err) || !errors.Is(err, compress.ErrTooLarge) {
			t.Errorf("%s: err %v, want CorruptError wrapping ErrTooLarge", codec, err)
		}
		if err := ValidateRecords(h, batch, 128<<10, false); err != nil {
			t.Errorf("%s: within limit: %v", codec, err)
		}
	}
}

// Recovery and follower appends accept what a leader wrote: an empty
// compacted batch fails the client rules but passes the integrity check.
func TestValidateIntegrityAcceptsEmptyBatch(t *testing.T) {
	b, err := BuildBatch(BatchOptions{KeepOffsetDeltas: true, LastOffsetDelta: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Validate(b); !IsInvalid(err) {
		t.Fatalf("Validate: %v", err)
	}
	h, batch, err := ValidateIntegrity(b)
	if err != nil || len(batch) != HeaderSize || h.NextOffset() != 5 {
		t.Fatalf("ValidateIntegrity: %+v %v", h, err)
	}
}

func TestSetters(t *testing.T) {
	b, _ := BuildBatch(BatchOptions{BaseTimestamp: 5}, []BatchRecord{{Value: []byte("v"), TimestampDelta: 3}})
	SetBaseOffset(b, 77)
	SetPartitionLeaderEpoch(b, 9)
	h, _, err := Validate(b)
	if err != nil || h.BaseOffset != 77 || h.PartitionLeaderEpoch != 9 {
		t.Fatalf("%+v %v", h, err)
	}
	SetLogAppendTime(b, 1234)
	h, batch, err := Validate(b)
	if err != nil || !h.IsLogAppendTime() || h.MaxTimestamp != 1234 || h.BaseTimestamp != 5 {
		t.Fatalf("%+v %v", h, err)
	}
	_ = Records(h, batch, 100, func(r *Record) error {
		if r.Timestamp(&h) != 1234 {
			t.Errorf("LogAppendTime record timestamp %d", r.Timestamp(&h))
		}
		return nil
	})
}

func TestLastSequenceWraps(t *testing.T) {
	h := Header{BaseSequence: 1<<31 - 2, LastOffsetDelta: 3}
	if got := h.LastSequence(); got != 1 {
		t.Fatalf("LastSequence %d, want 1", got)
	}
	h = Header{BaseSequence: NoSequence, LastOffsetDelta: 3}
	if h.LastSequence() != NoSequence {
		t.Fatal("no sequence")
	}
}

func TestCheckRecordsTimestampsAndMax(t *testing.T) {
	recs := []BatchRecord{{Value: []byte("a"), TimestampDelta: 0}, {Value: []byte("b"), TimestampDelta: 7}, {Value: []byte("c"), TimestampDelta: 3}}
	for _, c := range []Codec{CodecNone, CodecGzip, CodecZstd} {
		b, err := BuildBatch(BatchOptions{BaseTimestamp: 1000, PartitionLeaderEpoch: -1, Codec: c}, recs)
		if err != nil {
			t.Fatal(err)
		}
		h, batch, err := Validate(b)
		if err != nil {
			t.Fatal(err)
		}
		// No bound: the largest record timestamp comes back.
		if max, err := CheckRecords(h, batch, Rules{MaxUncompressed: 1 << 20}); err != nil || max != 1007 {
			t.Fatalf("%s: max %d, %v; want 1007", c, max, err)
		}
		// Within 5 ms of 1003: record 1 (1007) is 4 away, fine; of 1001: record 1 is 6 away.
		if _, err := CheckRecords(h, batch, Rules{MaxUncompressed: 1 << 20, Now: 1003, MaxTimestampDiff: 5}); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		_, err = CheckRecords(h, batch, Rules{MaxUncompressed: 1 << 20, Now: 1001, MaxTimestampDiff: 5})
		var te *TimestampError
		if !errors.As(err, &te) || !slices.Equal(indexes(te.RecordErrors()), []int{1}) {
			t.Fatalf("%s: got %v, want a TimestampError at record 1", c, err)
		}
		// A record without a timestamp (-1) is not judged, however far -1 is from Now.
		nb, err := BuildBatch(BatchOptions{BaseTimestamp: NoTimestamp, PartitionLeaderEpoch: -1, Codec: c}, []BatchRecord{{Value: []byte("a")}})
		if err != nil {
			t.Fatal(err)
		}
		nh, nbatch, err := Validate(nb)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := CheckRecords(nh, nbatch, Rules{MaxUncompressed: 1 << 20, Now: 1001, MaxTimestampDiff: 5}); err != nil {
			t.Fatalf("%s: a record without a timestamp was judged: %v", c, err)
		}
		// Keys required: no record has one.
		var ie *InvalidError
		if _, err := CheckRecords(h, batch, Rules{MaxUncompressed: 1 << 20, KeyRequired: true}); !errors.As(err, &ie) || !slices.Equal(indexes(ie.RecordErrors()), []int{0, 1, 2}) {
			t.Fatalf("%s: got %v, want an InvalidError at records 0, 1 and 2", c, err)
		}
	}
}
