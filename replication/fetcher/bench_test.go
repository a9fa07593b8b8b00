package fetcher

import (
	"bytes"
	"testing"
	"time"
)

// BenchmarkProduceReplicated compares acks=all on a 3-replica partition
// (two followers fetching over loopback) with acks=1 on a single replica,
// in one process: each op is one produce of a 100-record batch of 100-byte
// values, 4 producers in parallel.
//
//	go test -run - -bench ProduceReplicated -benchtime 3s ./replication/fetcher/
func BenchmarkProduceReplicated(b *testing.B) {
	vals := make([]string, 100)
	for i := range vals {
		vals[i] = string(bytes.Repeat([]byte{'x'}, 100))
	}
	benchProduce(b, vals, 2) // 2 × GOMAXPROCS producers
}

// benchProduce runs the acks=all/replicas=3 and acks=1/replicas=1
// sub-benchmarks, each op one produce of vals to tp0 on broker 1; with
// parallelism > 0 from parallelism × GOMAXPROCS producers, else from one.
func benchProduce(b *testing.B, vals []string, parallelism int) {
	size := 0
	for _, v := range vals {
		size += len(v)
	}
	run := func(b *testing.B, ids []int32, acks int16) {
		c := newCluster(b, ids...)
		c.apply(tp0, 1, 0, ids, ids, 1)
		b.SetBytes(int64(size))
		once := func() bool {
			if _, err := produce(b, c.brokers[1], tp0, acks, 10*time.Second, vals...); err != nil {
				b.Error(err)
				return false
			}
			return true
		}
		b.ResetTimer()
		if parallelism > 0 {
			b.SetParallelism(parallelism)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() && once() {
				}
			})
		} else {
			for i := 0; i < b.N && once(); i++ {
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)*float64(len(vals))/b.Elapsed().Seconds(), "records/s")
	}
	b.Run("acks=all/replicas=3", func(b *testing.B) { run(b, []int32{1, 2, 3}, -1) })
	b.Run("acks=1/replicas=1", func(b *testing.B) { run(b, []int32{1}, 1) })
}

// BenchmarkProduceReplicatedSerial is one producer with one request in
// flight (as an idempotent kgo producer per broker) sending batches of
// 1000 records of 1 KiB: each op's time is the produce's latency, so the
// acks=all figure shows what one replication round costs.
//
//	go test -run - -bench ProduceReplicatedSerial -benchtime 2s ./replication/fetcher/
func BenchmarkProduceReplicatedSerial(b *testing.B) {
	vals := make([]string, 1000)
	for i := range vals {
		vals[i] = string(bytes.Repeat([]byte{'x'}, 1024))
	}
	benchProduce(b, vals, 0)
}
