package handlers

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/storage/record"
)

// produceAllocs is the average number of heap allocations of one Produce
// request handled end to end inside the broker (BenchmarkProduceRequest's
// path: handler, validation, partition actor, storage append) carrying one
// uncompressed batch of n records, acks=1.
func produceAllocs(t *testing.T, n int) float64 {
	t.Helper()
	tp := storage.TopicPartition{Topic: "allocs", Partition: 0}
	cfg := storage.DefaultLogConfig()
	cfg.SkipRollFsync = true
	e := newDataEnv(t, cfg, tp)
	// Small values: 1,600 records stay well under max.message.bytes, and
	// the per-record work (framing, offset deltas) dominates the bytes.
	proto := codecBatch(t, record.CodecNone, n, time.Now().UnixMilli(), 16)
	req := produceReq(1, tp, nil)
	buf := make([]byte, 0, len(proto))
	run := func() {
		// The actor rewrites the header in place: a fresh copy of the
		// client's bytes each time, as a new request buffer would be
		// (copied into a reused buffer, so the copy allocates nothing).
		buf = append(buf[:0], proto...)
		req.Topics[0].Partitions[0].Records = buf
		resp := e.call(0, 9, req)
		if p := resp.Msg.(*kmsg.ProduceResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 {
			t.Fatalf("%d records: error %d", n, p.ErrorCode)
		}
	}
	// Warm up: the first appends open the segment, grow the index and the
	// actor's buffers; only steady state is measured.
	for i := 0; i < 20; i++ {
		run()
	}
	return testing.AllocsPerRun(100, run)
}

// TestProduceAllocsIndependentOfRecordCount guards "no per-record allocation
// for uncompressed batches": a batch of 1,600 records costs the produce path
// no more allocations than one of 16 (same request shape, one batch),
// within a small slack for the odd allocation a longer append triggers
// (an index entry, a buffer grown once). One allocation per record would
// add ~1,584 per request.
func TestProduceAllocsIndependentOfRecordCount(t *testing.T) {
	small := produceAllocs(t, 16)
	large := produceAllocs(t, 1600)
	t.Logf("allocs per produce request: 16 records %.1f, 1600 records %.1f", small, large)
	const slack = 8
	if large > small+slack {
		t.Fatalf("a 1,600-record uncompressed batch costs %.1f allocations per request, a 16-record one %.1f: "+
			"the produce path allocates per record (allowed slack %d)", large, small, slack)
	}
}
