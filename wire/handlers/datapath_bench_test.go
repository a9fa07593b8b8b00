package handlers

import (
	"testing"

	"gregor/storage"
	"gregor/storage/record"
)

// BenchmarkProduceAcksAll produces 10-record, ~1.1 KB batches through the
// Produce handler, the partition actor and the real storage engine.
func BenchmarkProduceAcksAll(b *testing.B) {
	e := newDataEnv(b, storage.DefaultLogConfig(), tpA)
	recs := make([]record.BatchRecord, 10)
	for i := range recs {
		recs[i] = record.BatchRecord{Value: make([]byte, 100)}
	}
	proto, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1}, recs)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(proto)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf := append([]byte(nil), proto...)
		if p := e.produce(9, -1, tpA, buf); p.ErrorCode != 0 {
			b.Fatalf("produce: %d", p.ErrorCode)
		}
	}
}
