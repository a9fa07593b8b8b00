package record

import (
	"bytes"
	"errors"
	"testing"
)

func TestRecompressKeepsEverythingButTheCodec(t *testing.T) {
	recs := sampleRecords()
	recs[1].OffsetDelta, recs[2].OffsetDelta, recs[3].OffsetDelta = 2, 5, 6 // compacted gaps
	recs[0].OffsetDelta = 0
	src, err := BuildBatch(BatchOptions{
		BaseOffset: 900, PartitionLeaderEpoch: 3, BaseTimestamp: 5000, Codec: CodecSnappy,
		Transactional: true, Producer: &Producer{ID: 44, Epoch: 2, BaseSequence: 10},
		KeepOffsetDeltas: true, LastOffsetDelta: 8,
	}, recs)
	if err != nil {
		t.Fatal(err)
	}
	sh, _, err := ValidateIntegrity(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, codec := range allCodecs {
		out, err := Recompress(src, codec, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		h, batch, err := ValidateIntegrity(out)
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		want := sh
		want.Attributes = sh.Attributes&^AttrCompressionMask | int16(codec)
		want.CRC, want.BatchLength = h.CRC, h.BatchLength
		if h != want {
			t.Fatalf("%s: header\n%+v\nwant\n%+v", codec, h, want)
		}
		var got []Record
		if err := Records(h, batch, 1<<20, func(r *Record) error {
			c := *r
			c.Key, c.Value, c.Headers = bytes.Clone(r.Key), bytes.Clone(r.Value), append([]RecordHeader(nil), r.Headers...)
			got = append(got, c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i, r := range got {
			w := recs[i]
			if r.OffsetDelta != w.OffsetDelta || r.TimestampDelta != w.TimestampDelta ||
				(r.Key == nil) != (w.Key == nil) || !bytes.Equal(r.Key, w.Key) ||
				(r.Value == nil) != (w.Value == nil) || !bytes.Equal(r.Value, w.Value) || len(r.Headers) != len(w.Headers) {
				t.Fatalf("%s: record %d: %+v", codec, i, r)
			}
		}
	}
}

func TestRecompressRejectsDamage(t *testing.T) {
	b := kmsgBatchBytes(t, CodecNone, goldenRecords(), nil)
	short := append([]byte(nil), b[:len(b)-3]...)
	if _, err := Recompress(short, CodecZstd, 1<<20); !IsCorrupt(err) {
		t.Errorf("truncated: %v", err)
	}
	extra := append(append([]byte(nil), b...), 0x02, 0x00)
	fixBatch(extra)
	if _, err := Recompress(extra, CodecZstd, 1<<20); !IsInvalid(err) {
		t.Errorf("trailing: %v", err)
	}
	if _, err := Recompress(b, 9, 1<<20); !errors.Is(err, ErrBadBatchInput) {
		t.Errorf("codec 9: %v", err)
	}
}
