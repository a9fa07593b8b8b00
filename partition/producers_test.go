package partition

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage/record"
)

func hdr(pid int64, epoch int16, seq int32, n int32, base int64) record.Header {
	return record.Header{BaseOffset: base, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq,
		LastOffsetDelta: n - 1, RecordCount: n, Magic: 2}
}

func TestProducersCheck(t *testing.T) {
	type step struct {
		h       record.Header
		wantErr *kerr.Error
		wantDup int64 // first offset of the duplicate, -1 = not a duplicate
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"no producer id always passes", []step{
			{hdr(-1, -1, -1, 3, 0), nil, -1},
			{hdr(-1, -1, -1, 3, 3), nil, -1},
		}},
		{"in-order sequences", []step{
			{hdr(7, 0, 0, 3, 0), nil, -1},
			{hdr(7, 0, 3, 2, 3), nil, -1},
			{hdr(7, 0, 5, 1, 5), nil, -1},
		}},
		{"retry of last batch is a duplicate", []step{
			{hdr(7, 0, 0, 3, 10), nil, -1},
			{hdr(7, 0, 0, 3, 99), nil, 10},
		}},
		{"retry of an older retained batch is a duplicate", []step{
			{hdr(7, 0, 0, 2, 0), nil, -1},
			{hdr(7, 0, 2, 2, 2), nil, -1},
			{hdr(7, 0, 4, 2, 4), nil, -1},
			{hdr(7, 0, 2, 2, 99), nil, 2},
		}},
		{"batch evicted from the 5 is out of order", []step{
			{hdr(7, 0, 0, 1, 0), nil, -1},
			{hdr(7, 0, 1, 1, 1), nil, -1},
			{hdr(7, 0, 2, 1, 2), nil, -1},
			{hdr(7, 0, 3, 1, 3), nil, -1},
			{hdr(7, 0, 4, 1, 4), nil, -1},
			{hdr(7, 0, 5, 1, 5), nil, -1},
			{hdr(7, 0, 0, 1, 99), kerr.OutOfOrderSequenceNumber, -1},
			{hdr(7, 0, 1, 1, 99), nil, 1},
		}},
		{"sequence gap", []step{
			{hdr(7, 0, 0, 3, 0), nil, -1},
			{hdr(7, 0, 4, 1, 3), kerr.OutOfOrderSequenceNumber, -1},
		}},
		{"overlapping but different range", []step{
			{hdr(7, 0, 0, 3, 0), nil, -1},
			{hdr(7, 0, 1, 3, 3), kerr.OutOfOrderSequenceNumber, -1},
		}},
		{"older epoch is fenced", []step{
			{hdr(7, 2, 0, 1, 0), nil, -1},
			{hdr(7, 1, 1, 1, 1), kerr.InvalidProducerEpoch, -1},
			{hdr(7, 1, 0, 1, 1), kerr.InvalidProducerEpoch, -1},
		}},
		{"new epoch must restart at 0", []step{
			{hdr(7, 0, 0, 3, 0), nil, -1},
			{hdr(7, 1, 3, 1, 3), kerr.OutOfOrderSequenceNumber, -1},
			{hdr(7, 1, 0, 1, 3), nil, -1},
			{hdr(7, 1, 1, 1, 4), nil, -1},
		}},
		{"same range under a new epoch is not a duplicate", []step{
			{hdr(7, 0, 0, 1, 0), nil, -1},
			{hdr(7, 1, 0, 1, 1), nil, -1},
		}},
		{"unknown producer accepted at any sequence (KIP-360)", []step{
			{hdr(8, 3, 42, 2, 0), nil, -1},
			{hdr(8, 3, 44, 1, 2), nil, -1},
		}},
		{"sequence wraps at MaxInt32", []step{
			{hdr(9, 0, 2147483646, 2, 0), nil, -1},
			{hdr(9, 0, 0, 1, 2), nil, -1},
		}},
		{"producers are independent", []step{
			{hdr(1, 0, 0, 1, 0), nil, -1},
			{hdr(2, 0, 0, 1, 1), nil, -1},
			{hdr(1, 0, 1, 1, 2), nil, -1},
			{hdr(2, 0, 0, 1, 9), nil, 1},
		}},
		{"idempotent batch without sequence", []step{
			{hdr(1, 0, -1, 1, 0), kerr.InvalidRecord, -1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProducers()
			for i, s := range tc.steps {
				h := s.h
				dup, err := p.Check(&h)
				if err != s.wantErr {
					t.Fatalf("step %d: err %v, want %v", i, err, s.wantErr)
				}
				if s.wantDup >= 0 {
					if dup == nil || dup.FirstOffset != s.wantDup {
						t.Fatalf("step %d: dup %+v, want first offset %d", i, dup, s.wantDup)
					}
					continue
				}
				if dup != nil {
					t.Fatalf("step %d: unexpected duplicate %+v", i, dup)
				}
				if err == nil {
					p.Update(&h, 1000)
				}
			}
		})
	}
}

func TestProducersRetainsFive(t *testing.T) {
	p := NewProducers()
	for i := int32(0); i < 8; i++ {
		h := hdr(5, 0, i*2, 2, int64(i)*2)
		p.Update(&h, int64(i))
	}
	e := p.Entry(5)
	if len(e.Batches) != NumBatchesToRetain || e.Batches[0].FirstSeq != 6 || e.LastSeq() != 15 {
		t.Fatalf("entry %+v: want 5 batches seq 6..15", e)
	}
}
