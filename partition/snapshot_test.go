package partition

import (
	"errors"
	"slices"
	"testing"

	"gregor/storage/record"
)

func TestProducerSnapshotRoundTrip(t *testing.T) {
	p := NewProducers()
	for _, h := range []record.Header{hdr(1, 0, 0, 3, 0), hdr(1, 0, 3, 2, 3), txnHdr(2, 4, 2147483646, 3, 5), txnHdr(3, 1, 0, 1, 8)} {
		p.Update(&h, 100+h.BaseOffset)
	}
	m := markerHdr(3, 2, 9)
	p.ApplyMarker(&m, record.EndTxn{Type: record.ControlCommit, CoordinatorEpoch: 6})

	q, err := DecodeProducerSnapshot(EncodeProducerSnapshot(p))
	if err != nil {
		t.Fatal(err)
	}
	// Only the last batch of each producer is kept, as in Kafka.
	if e := q.Entry(1); e.Epoch != 0 || len(e.Batches) != 1 || e.Batches[0] != (BatchMeta{FirstSeq: 3, LastSeq: 4, FirstOffset: 3, LastOffset: 4, Timestamp: 103}) || e.TxnFirstOffset != -1 {
		t.Fatalf("producer 1: %+v", e)
	}
	// The sequence range wraps at MaxInt32; the open transaction is back.
	if e := q.Entry(2); e.Batches[0].FirstSeq != 2147483646 || e.Batches[0].LastSeq != 0 || e.TxnFirstOffset != 5 || e.Epoch != 4 {
		t.Fatalf("producer 2: %+v", e)
	}
	if e := q.Entry(3); e.Epoch != 2 || len(e.Batches) != 0 || e.CoordinatorEpoch != 6 || e.TxnFirstOffset != -1 {
		t.Fatalf("producer 3: %+v", e)
	}
	if got := q.LastStableOffset(20); got != 5 {
		t.Fatalf("LSO from the snapshot %d, want 5", got)
	}
	if ong := q.OngoingTxns(); !slices.Equal(ong, []CompletedTxn{{ProducerID: 2, FirstOffset: 5, LastOffset: -1}}) {
		t.Fatalf("ongoing %+v", ong)
	}
	// A retry of producer 1's last batch is still a duplicate.
	h := hdr(1, 0, 3, 2, 99)
	if dup, err := q.Check(&h); err != nil || dup == nil || dup.FirstOffset != 3 {
		t.Fatalf("retry after snapshot: dup %+v err %v", dup, err)
	}

	b := EncodeProducerSnapshot(p)
	b[len(b)-1] ^= 1
	if _, err := DecodeProducerSnapshot(b); !errors.Is(err, errBadSnapshot) {
		t.Fatalf("flipped bit: %v", err)
	}
	b = EncodeProducerSnapshot(p)
	b[1] = 2
	if _, err := DecodeProducerSnapshot(b); !errors.Is(err, errBadSnapshot) {
		t.Fatalf("version 2: %v", err)
	}
	if _, err := DecodeProducerSnapshot(b[:5]); !errors.Is(err, errBadSnapshot) {
		t.Fatalf("short: %v", err)
	}
}
