package kgocapture

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestBatches: every codec yields BatchesPerCodec batches with that codec
// in their attributes, one idempotent producer per codec, sequences
// continuing across batches.
func TestBatches(t *testing.T) {
	bs := Batches(t)
	if len(bs) != len(Codecs)*BatchesPerCodec {
		t.Fatalf("%d batches", len(bs))
	}
	for i, b := range bs {
		var kb kmsg.RecordBatch
		if err := kb.ReadFrom(b.Bytes); err != nil {
			t.Fatal(err)
		}
		if b.Codec != Codecs[i/BatchesPerCodec] || int8(kb.Attributes&7) != b.Codec.Attr {
			t.Fatalf("batch %d: codec %s, attributes %#x", i, b.Codec.Name, kb.Attributes)
		}
		if i%BatchesPerCodec > 0 {
			var prev kmsg.RecordBatch
			_ = prev.ReadFrom(bs[i-1].Bytes)
			if kb.ProducerID != prev.ProducerID || kb.FirstSequence != prev.FirstSequence+prev.NumRecords {
				t.Fatalf("batch %d: producer %d seq %d after producer %d seq %d+%d", i, kb.ProducerID, kb.FirstSequence, prev.ProducerID, prev.FirstSequence, prev.NumRecords)
			}
		}
		t.Logf("%s: %d bytes, %d records, producer %d epoch %d seq %d, ts %d..%d", b.Codec.Name, len(b.Bytes), kb.NumRecords, kb.ProducerID, kb.ProducerEpoch, kb.FirstSequence, kb.FirstTimestamp, kb.MaxTimestamp)
	}
}
