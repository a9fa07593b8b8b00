// Package perftest implements `gregor producer-perf-test` and
// `gregor consumer-perf-test`, the equivalents of Kafka's
// kafka-producer-perf-test.sh (ProducerPerformance) and
// kafka-consumer-perf-test.sh (ConsumerPerformance): the same flags and the
// same output lines, driven through franz-go (kgo) like every Gregor tool.
package perftest

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// stats accumulates producer latencies as Kafka's ProducerPerformance.Stats
// does: a progress window printed every reportInterval, overall count,
// bytes, total and max latency, and a sample of latencies (every
// sampling-th record) for the final percentiles. Safe for concurrent use
// (kgo runs produce callbacks on its own goroutines).
type stats struct {
	mu       sync.Mutex
	start    time.Time
	sampling int64
	samples  []int64 // latencies in µs
	iter     int64
	count    int64
	bytes    int64
	totalLat time.Duration
	maxLat   time.Duration

	// current window
	windowStart time.Time
	windowCount int64
	windowBytes int64
	windowTotal time.Duration
	windowMax   time.Duration

	reportInterval time.Duration
	out            io.Writer

	commits []time.Duration // each transaction commit's duration
	endTxns []time.Duration // the EndTxn part of each
}

// commit records one transaction commit that took d, end of it in EndTxn.
func (s *stats) commit(d, end time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits = append(s.commits, d)
	s.endTxns = append(s.endTxns, end)
}

// maxSamples bounds the latency sample (Kafka keeps at most 500,000).
const maxSamples = 500000

func newStats(numRecords int64, reportInterval time.Duration, out io.Writer, now time.Time) *stats {
	sampling := max(int64(1), numRecords/min(max(numRecords, 1), maxSamples))
	return &stats{start: now, windowStart: now, sampling: sampling, reportInterval: reportInterval, out: out,
		samples: make([]int64, 0, min(numRecords/sampling+1, maxSamples+1))}
}

// record adds one acknowledged record of size bytes sent at sent, acked at now.
func (s *stats) record(sent, now time.Time, size int) {
	lat := now.Sub(sent)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	s.bytes += int64(size)
	s.totalLat += lat
	s.maxLat = max(s.maxLat, lat)
	s.windowCount++
	s.windowBytes += int64(size)
	s.windowTotal += lat
	s.windowMax = max(s.windowMax, lat)
	if s.iter%s.sampling == 0 && len(s.samples) < cap(s.samples) {
		s.samples = append(s.samples, lat.Microseconds())
	}
	s.iter++
	if now.Sub(s.windowStart) >= s.reportInterval {
		s.printWindow(now)
		s.windowStart, s.windowCount, s.windowBytes, s.windowTotal, s.windowMax = now, 0, 0, 0, 0
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// printWindow prints Kafka's progress line:
// "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency."
func (s *stats) printWindow(now time.Time) {
	elapsed := now.Sub(s.windowStart).Seconds()
	rate := float64(s.windowCount) / elapsed
	mb := float64(s.windowBytes) / elapsed / (1024 * 1024)
	avg := 0.0
	if s.windowCount > 0 {
		avg = ms(s.windowTotal) / float64(s.windowCount)
	}
	fmt.Fprintf(s.out, "%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency.\n",
		s.windowCount, rate, mb, avg, ms(s.windowMax))
}

// Summary is the final result of a producer run.
type Summary struct {
	Records       int64
	RecordsPerSec float64
	MBPerSec      float64
	AvgLatencyMs  float64
	MaxLatencyMs  float64
	// P50…P999 are latency percentiles in µs over the sample.
	P50, P95, P99, P999 int64
	// Transactions is how many transactions were committed (0 without
	// transactions); CommitP50/P99/Max are their commit durations (flush
	// and EndTxn) in µs, EndTxnP50/P99 those of the EndTxn call alone.
	Transactions                    int
	CommitP50, CommitP99, CommitMax int64
	EndTxnP50, EndTxnP99            int64
}

func (s *stats) summary(end time.Time) Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	elapsed := end.Sub(s.start).Seconds()
	sum := Summary{Records: s.count, MaxLatencyMs: ms(s.maxLat)}
	if elapsed > 0 {
		sum.RecordsPerSec = float64(s.count) / elapsed
		sum.MBPerSec = float64(s.bytes) / elapsed / (1024 * 1024)
	}
	if s.count > 0 {
		sum.AvgLatencyMs = ms(s.totalLat) / float64(s.count)
	}
	lat := slices.Clone(s.samples)
	slices.Sort(lat)
	sum.P50, sum.P95, sum.P99, sum.P999 = percentile(lat, 0.5), percentile(lat, 0.95), percentile(lat, 0.99), percentile(lat, 0.999)
	commits, ends := sortedMicros(s.commits), sortedMicros(s.endTxns)
	sum.Transactions = len(commits)
	sum.CommitP50, sum.CommitP99 = percentile(commits, 0.5), percentile(commits, 0.99)
	sum.EndTxnP50, sum.EndTxnP99 = percentile(ends, 0.5), percentile(ends, 0.99)
	if len(commits) > 0 {
		sum.CommitMax = commits[len(commits)-1]
	}
	return sum
}

func sortedMicros(ds []time.Duration) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.Microseconds()
	}
	slices.Sort(out)
	return out
}

// percentile of sorted values, as Kafka's Stats.percentiles (index
// floor(p × n)).
func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(p*float64(len(sorted))), len(sorted)-1)]
}

// printFinal prints Kafka's last line: "N records sent, X records/sec (Y
// MB/sec), A ms avg latency, M ms max latency, P ms 50th, P ms 95th, P ms
// 99th, P ms 99.9th." (percentiles in whole ms, as Kafka prints them).
func (sum Summary) printFinal(w io.Writer) {
	fmt.Fprintf(w, "%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.\n",
		sum.Records, sum.RecordsPerSec, sum.MBPerSec, sum.AvgLatencyMs, sum.MaxLatencyMs,
		sum.P50/1000, sum.P95/1000, sum.P99/1000, sum.P999/1000)
}

// printMicros prints the percentiles in µs (Gregor's --print-latency-us):
// Kafka's whole-ms percentiles cannot show sub-millisecond latencies.
func (sum Summary) printMicros(w io.Writer) {
	fmt.Fprintf(w, "latency percentiles: %d us 50th, %d us 95th, %d us 99th, %d us 99.9th.\n", sum.P50, sum.P95, sum.P99, sum.P999)
	if sum.Transactions > 0 {
		fmt.Fprintf(w, "%d transactions committed, commit latency: %d us 50th, %d us 99th, %d us max; EndTxn alone: %d us 50th, %d us 99th.\n",
			sum.Transactions, sum.CommitP50, sum.CommitP99, sum.CommitMax, sum.EndTxnP50, sum.EndTxnP99)
	}
}
