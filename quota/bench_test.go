package quota

import (
	"testing"
	"time"
)

// BenchmarkRateRecordAndThrottle: the per-request cost of a byte-rate
// quota (record the bytes, compute the throttle) over Kafka's default
// 11 × 1 s window.
func BenchmarkRateRecordAndThrottle(b *testing.B) {
	r := NewRate(DefaultConfig)
	now := time.Now()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.RecordAndThrottle(65536, 1<<20, now.Add(time.Duration(i)*time.Microsecond))
	}
}

// BenchmarkRateRecordAndThrottleParallel: the same from every core on one
// sensor (one client id produced to over many connections).
func BenchmarkRateRecordAndThrottleParallel(b *testing.B) {
	r := NewRate(DefaultConfig)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.RecordAndThrottle(65536, 1<<20, time.Now())
		}
	})
}
