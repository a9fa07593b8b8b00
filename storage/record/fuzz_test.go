package record

import (
	"bytes"
	"testing"

	"gregor/storage/internal/kgocapture"
)

// FuzzValidate feeds random and mutated batches through every entry point
// of the package: none may panic, and a batch that passes Validate and
// ValidateRecords must iterate to exactly RecordCount records. Each input
// is also tried with batchLength and the CRC repaired, so the fuzzer gets
// past the checksum into the record parser. Seeds: batches a real kgo
// producer sent to kfake (every codec, idempotent, captured at test time by
// kgocapture), franz-go-encoded batches with each codec, plus batches from
// our builder.
//
//	go test ./storage/record -run '^$' -fuzz FuzzValidate -fuzztime 60s
func FuzzValidate(f *testing.F) {
	for _, b := range kgocapture.Batches(f) {
		f.Add(bytes.Clone(b.Bytes))
	}
	for _, codec := range allCodecs {
		f.Add(kmsgBatchBytes(f, codec, goldenRecords(), nil))
		b, err := BuildBatch(BatchOptions{Codec: codec, Producer: &Producer{ID: 1, BaseSequence: 0}}, sampleRecords())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		exercise(t, b)
		if len(b) >= HeaderSize {
			c := bytes.Clone(b)
			c[OffMagic] = 2
			fixBatch(c)
			exercise(t, c)
		}
	})
}

func exercise(t *testing.T, b []byte) {
	const limit = 1 << 20
	_, _ = ParseHeader(b)
	if h, batch, err := ValidateIntegrity(b); err == nil {
		// Recovery walks records of batches that only passed integrity.
		_ = Records(h, batch, limit, func(*Record) error { return nil })
	}
	h, batch, err := Validate(b)
	if err != nil {
		if !IsCorrupt(err) && !IsInvalid(err) {
			t.Fatalf("untyped Validate error %T: %v", err, err)
		}
		return
	}
	for _, keyRequired := range []bool{false, true} {
		err := ValidateRecords(h, batch, limit, keyRequired)
		if err != nil {
			if !IsCorrupt(err) && !IsInvalid(err) {
				t.Fatalf("untyped ValidateRecords error %T: %v", err, err)
			}
			continue
		}
		n := int32(0)
		if err := Records(h, batch, limit, func(r *Record) error {
			if r.OffsetDelta != n {
				t.Fatalf("record %d has offset delta %d after validation", n, r.OffsetDelta)
			}
			n++
			return nil
		}); err != nil || n != h.RecordCount {
			t.Fatalf("validated batch iterates %d of %d records: %v", n, h.RecordCount, err)
		}
	}
}
