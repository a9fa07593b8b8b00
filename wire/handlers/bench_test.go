package handlers

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/storage/record"
)

// BenchmarkValidateProduceBatch is the produce-path validation per codec
// (Kafka's LogValidator rules, validateProduceBatch) on a 16-record batch
// of 1 KiB values; MB/s are of record values (16 KiB per batch, whatever
// the codec shrank them to). "to-zstd" adds the
// recompression a topic compression.type=zstd forces on a gzip batch.
func BenchmarkValidateProduceBatch(b *testing.B) {
	now := time.Now().UnixMilli()
	for _, c := range allCodecs {
		for _, target := range []string{"producer", "zstd"} {
			if target == "zstd" && c != record.CodecGzip {
				continue
			}
			name := c.String()
			if target != "producer" {
				name += "-to-" + target
			}
			b.Run(name, func(b *testing.B) {
				in := codecBatch(b, c, 16, now, 1024)
				cfg := storage.DefaultLogConfig()
				cfg.CompressionType = target
				cfg.MessageTimestampDifferenceMaxMs = 3600_000
				b.SetBytes(16 * 1024)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, rej := validateProduceBatch(cfg, 9, in, now); rej != nil {
						b.Fatal(rej.detail)
					}
				}
			})
		}
	}
}

// BenchmarkProduceRequest is produce request handling end to end inside the
// broker: handler, validation, partition actor, storage append, for a
// request carrying one 16 × 1 KiB batch for each of 3 partitions (the
// bench-compare shape), acks=1. MB/s are of record batch bytes.
func BenchmarkProduceRequest(b *testing.B) {
	tps := []storage.TopicPartition{{Topic: "perf", Partition: 0}, {Topic: "perf", Partition: 1}, {Topic: "perf", Partition: 2}}
	cfg := storage.DefaultLogConfig()
	cfg.SkipRollFsync = true
	e := newDataEnv(b, cfg, tps...)
	proto := codecBatch(b, record.CodecNone, 16, time.Now().UnixMilli(), 1024)
	req := produceReq(1, tps[0], nil)
	for i := 1; i < len(tps); i++ {
		rp := req.Topics[0].Partitions[0]
		rp.Partition = tps[i].Partition
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
	}
	bufs := make([][]byte, len(tps))
	b.SetBytes(int64(len(proto) * len(tps)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range bufs {
			// The actor rewrites the header in place: a fresh copy of the
			// client's bytes each time, as a new request buffer would be.
			bufs[j] = append(bufs[j][:0], proto...)
			req.Topics[0].Partitions[j].Records = bufs[j]
		}
		resp := e.call(0, 9, req)
		for _, p := range resp.Msg.(*kmsg.ProduceResponse).Topics[0].Partitions {
			if p.ErrorCode != 0 {
				b.Fatalf("partition %d: error %d", p.Partition, p.ErrorCode)
			}
		}
	}
}

// BenchmarkFetchBelowHighWatermark is a consumer fetch of data already below
// the high watermark through the Fetch handler: the answer is file regions
// for sendfile (no copy of record bytes; the body is released unread here).
// MB/s are of record bytes answered.
func BenchmarkFetchBelowHighWatermark(b *testing.B) {
	cfg := storage.DefaultLogConfig()
	cfg.SkipRollFsync = true
	e := newDataEnv(b, cfg, tpA)
	proto := codecBatch(b, record.CodecNone, 16, time.Now().UnixMilli(), 1024)
	const batches = 256
	e.produceCopies(tpA, proto, batches)
	benchFetch(b, e, -1, batches)
}

// benchFetch runs b.N v12 fetches by replica (-1: a consumer) of
// 16-record batches at offsets below batches-64, 1 MiB at most each, and
// reports the record bytes answered.
func benchFetch(b *testing.B, e *dataEnv, replica int32, batches int) {
	req := fetchReq(tpA, 0, 0, 0)
	req.ReplicaID = replica
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

// BenchmarkFetchReadCommitted is BenchmarkFetchBelowHighWatermark at
// READ_COMMITTED over a log where every 16th batch belongs to a
// transaction that was aborted: the cost of the last stable offset bound,
// the upper-bound read after the data and the .txnindex search.
func BenchmarkFetchReadCommitted(b *testing.B) {
	cfg := storage.DefaultLogConfig()
	cfg.SkipRollFsync = true
	e := newDataEnv(b, cfg, tpA)
	proto := codecBatch(b, record.CodecNone, 16, time.Now().UnixMilli(), 1024)
	tid := "bench"
	const batches = 256
	for i := 0; i < batches; i++ {
		if i%16 == 15 {
			pid := int64(1000 + i)
			if p := e.txnProduce(&tid, tpA, txnBatch(b, pid, 0, 0, 1)); p.ErrorCode != 0 {
				b.Fatalf("transactional produce: %d", p.ErrorCode)
			}
			if code := e.marker(pid, 0, false, 0, tpA); code != 0 {
				b.Fatalf("marker: %d", code)
			}
			continue
		}
		e.produceCopies(tpA, proto, 1)
	}
	req := fetchReq(tpA, 0, 0, 0)
	req.IsolationLevel = 1
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
