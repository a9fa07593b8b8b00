package handlers

import (
	"testing"
	"time"

	"gregor/storage"
	"gregor/storage/record"
)

// BenchmarkFollowerFetch is a follower's fetch of data below the leader's
// log end offset through the Fetch handler: the position is recorded in
// the partition actor (one message) and the answer, file regions for
// sendfile, is built once the actor has answered. MB/s are of record
// bytes answered.
func BenchmarkFollowerFetch(b *testing.B) {
	cfg := storage.DefaultLogConfig()
	cfg.SkipRollFsync = true
	e := newDataEnv(b, cfg, tpA)
	e.leadWithFollower(tpA, cfg)
	proto := codecBatch(b, record.CodecNone, 16, time.Now().UnixMilli(), 1024)
	const batches = 256
	e.produceCopies(tpA, proto, batches)
	req := fetchReq(tpA, 0, 0, 0)
	req.ReplicaID = 1
	req.Topics[0].Partitions[0].PartitionMaxBytes = 1 << 20
	b.ReportAllocs()
	b.ResetTimer()
	var total int64
	for i := 0; i < b.N; i++ {
		req.Topics[0].Partitions[0].FetchOffset = int64(i%(batches-64)) * 16
		resp := e.call(1, 12, req)
		if resp.Body == nil {
			b.Fatal("fetch answered without a zero-copy body")
		}
		total += resp.Body.Size
		if resp.Body.Release != nil {
			resp.Body.Release()
		}
	}
	b.SetBytes(total / int64(b.N))
}
