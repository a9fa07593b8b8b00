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
	run := func(b *testing.B, ids []int32, acks int16) {
		c := newCluster(b, ids...)
		c.apply(tp0, 1, 0, ids, ids, 1)
		b.SetBytes(100 * 100)
		b.SetParallelism(2) // 2 × GOMAXPROCS producers
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := produce(b, c.brokers[1], tp0, acks, 10*time.Second, vals...); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.StopTimer()
		b.ReportMetric(float64(b.N)*100/b.Elapsed().Seconds(), "records/s")
	}
	b.Run("acks=all/replicas=3", func(b *testing.B) { run(b, []int32{1, 2, 3}, -1) })
	b.Run("acks=1/replicas=1", func(b *testing.B) { run(b, []int32{1}, 1) })
}
