package record

import (
	"bytes"
	"testing"

	"gregor/storage/internal/kgocapture"
)

// TestKgoProducerBatches: batches exactly as franz-go's kgo producer sent
// them (captured from kfake, every codec, idempotent producer) pass
// Validate and ValidateRecords, and Records decodes each to the records
// that were produced: keys and values (nil kept apart from empty),
// headers, timestamps (including a negative delta), offset deltas, and
// the producer id/epoch/sequence kgo set.
func TestKgoProducerBatches(t *testing.T) {
	var seq int32
	for i, kb := range kgocapture.Batches(t) {
		b := bytes.Clone(kb.Bytes)
		h, batch, err := Validate(b)
		if err != nil {
			t.Fatalf("batch %d (%s): %v", i, kb.Codec.Name, err)
		}
		if len(batch) != len(b) || h.Codec() != Codec(kb.Codec.Attr) || h.RecordCount != int32(len(kb.Records)) || !h.HasProducerID() || h.ProducerEpoch < 0 {
			t.Fatalf("batch %d (%s): header %+v", i, kb.Codec.Name, h)
		}
		if i%kgocapture.BatchesPerCodec == 0 { // a new producer per codec
			seq = 0
		}
		if h.BaseSequence != seq || h.LastSequence() != seq+h.RecordCount-1 {
			t.Fatalf("batch %d (%s): sequences %d..%d, want from %d", i, kb.Codec.Name, h.BaseSequence, h.LastSequence(), seq)
		}
		seq += h.RecordCount
		if err := ValidateRecords(h, batch, 1<<20, false); err != nil {
			t.Fatalf("batch %d (%s): %v", i, kb.Codec.Name, err)
		}
		hasNilKey := false
		for _, r := range kb.Records {
			hasNilKey = hasNilKey || r.Key == nil
		}
		if err := ValidateRecords(h, batch, 1<<20, true); (err != nil) != hasNilKey || (err != nil && !IsInvalid(err)) {
			t.Fatalf("batch %d (%s): keys required: %v (a null key: %v)", i, kb.Codec.Name, err, hasNilKey)
		}
		maxTs := int64(-1)
		j := 0
		if err := Records(h, batch, 1<<20, func(r *Record) error {
			if j >= len(kb.Records) {
				t.Fatalf("batch %d: record %d beyond %d produced", i, j, len(kb.Records))
			}
			want := kb.Records[j]
			if r.OffsetDelta != int32(j) || r.Timestamp(&h) != want.Timestamp || !sameBytes(r.Key, want.Key) || !sameBytes(r.Value, want.Value) || len(r.Headers) != len(want.Headers) {
				t.Fatalf("batch %d (%s) record %d: delta %d ts %d key %q value %.20q, %d headers; want ts %d key %q value %.20q, %d headers",
					i, kb.Codec.Name, j, r.OffsetDelta, r.Timestamp(&h), r.Key, r.Value, len(r.Headers), want.Timestamp, want.Key, want.Value, len(want.Headers))
			}
			for k, hd := range r.Headers {
				if string(hd.Key) != want.Headers[k].Key || !sameBytes(hd.Value, want.Headers[k].Value) {
					t.Fatalf("batch %d record %d header %d: %q=%q, want %q=%q", i, j, k, hd.Key, hd.Value, want.Headers[k].Key, want.Headers[k].Value)
				}
			}
			maxTs = max(maxTs, want.Timestamp)
			j++
			return nil
		}); err != nil || j != len(kb.Records) {
			t.Fatalf("batch %d (%s): %d of %d records: %v", i, kb.Codec.Name, j, len(kb.Records), err)
		}
		if h.MaxTimestamp != maxTs {
			t.Fatalf("batch %d (%s): max timestamp %d, want %d", i, kb.Codec.Name, h.MaxTimestamp, maxTs)
		}
	}
}

// sameBytes is bytes.Equal that also tells nil (null) from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
