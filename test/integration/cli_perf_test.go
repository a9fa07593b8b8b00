package integration

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"gregor/test/harness"
)

// Kafka's ProducerPerformance lines: the progress line every reporting
// interval and the final line (printTotal).
var (
	perfProgressRE = regexp.MustCompile(`^(\d+) records sent, (\d+\.\d) records/sec \((\d+\.\d\d) MB/sec\), (\d+\.\d) ms avg latency, (\d+\.\d) ms max latency\.$`)
	perfFinalRE    = regexp.MustCompile(`^(\d+) records sent, (\d+\.\d{6}) records/sec \((\d+\.\d\d) MB/sec\), (\d+\.\d\d) ms avg latency, (\d+\.\d\d) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$`)
)

const consumerPerfHeader = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"

// TestCLIPerfTools runs bin/kafka-producer-perf-test.sh and
// bin/kafka-consumer-perf-test.sh against a real broker: the producer's
// lines have Kafka's format with the exact record count and consistent
// numbers, the topic then holds exactly that many records, and the
// consumer prints Kafka's CSV header and a row counting every record and
// its bytes.
func TestCLIPerfTools(t *testing.T) {
	const (
		topic = "perf3"
		n     = 20000
		size  = 100
	)
	b := harness.StartBroker(t, nil)
	quickRaceExit(t)
	createTopic(t, b, topic, 3, nil)

	// A short --reporting-interval (Gregor's; Kafka's is fixed at 5 s) so
	// progress lines appear too.
	code, out, errs := cliRun(t, nil, "kafka-producer-perf-test.sh", "--topic", topic, "--num-records", strconv.Itoa(n), "--record-size", strconv.Itoa(size),
		"--throughput", "-1", "--reporting-interval", "100", "--producer-props", "bootstrap.servers="+b.Addr(), "acks=1")
	if code != 0 || strings.Contains(errs, "ERROR") {
		t.Fatalf("producer-perf-test: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	final := perfFinalRE.FindStringSubmatch(lines[len(lines)-1])
	if final == nil {
		t.Fatalf("last producer line %q does not have Kafka's format:\n%s", lines[len(lines)-1], out)
	}
	if final[1] != strconv.Itoa(n) {
		t.Fatalf("final line says %s records sent, want %d: %q", final[1], n, final[0])
	}
	num := func(s string) float64 {
		t.Helper()
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	rps, mbps, avg, maxLat := num(final[2]), num(final[3]), num(final[4]), num(final[5])
	p50, p95, p99, p999 := num(final[6]), num(final[7]), num(final[8]), num(final[9])
	// MB/sec is records/sec × size / MiB, rounded to 2 places.
	if want := rps * size / (1 << 20); rps <= 0 || math.Abs(mbps-want) > 0.0051 {
		t.Fatalf("final line: %.6f records/sec of %d bytes is %.4f MB/sec, printed %s: %q", rps, size, want, final[3], final[0])
	}
	// Percentiles (whole ms, truncated) are ordered and within the max; the
	// average is within the max.
	if !(p50 <= p95 && p95 <= p99 && p99 <= p999 && p999 <= math.Ceil(maxLat) && avg <= maxLat+0.005) {
		t.Fatalf("final line latencies out of order: %q", final[0])
	}
	progress := int64(0)
	for _, l := range lines[:len(lines)-1] {
		m := perfProgressRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("producer line %q is neither Kafka's progress nor final line:\n%s", l, out)
		}
		c, _ := strconv.ParseInt(m[1], 10, 64)
		progress += c
	}
	// The progress windows cover records acknowledged before the last
	// window closed, never more than were sent.
	if progress > n {
		t.Fatalf("progress lines count %d records, more than %d:\n%s", progress, n, out)
	}

	// The topic holds exactly n records.
	adm := kadm.NewClient(b.Client())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("end offset %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		total += o.Offset
	})
	if total != n {
		t.Fatalf("topic holds %d records after the producer perf test, want %d", total, n)
	}

	// The consumer, without a group (rebalance.time.ms 0) and with one.
	for _, group := range []string{"", "perf-group"} {
		args := []string{"--bootstrap-server", b.Addr(), "--topic", topic, "--messages", strconv.Itoa(n), "--timeout", "30000"}
		if group != "" {
			args = append(args, "--group", group)
		}
		before := time.Now()
		code, out, errs = cliRun(t, nil, "kafka-consumer-perf-test.sh", args...)
		after := time.Now()
		if code != 0 || errs != "" {
			t.Fatalf("consumer-perf-test (group %q): exit %d\nstdout:\n%s\nstderr:\n%s", group, code, out, errs)
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(lines) != 2 || lines[0] != consumerPerfHeader {
			t.Fatalf("consumer-perf-test (group %q) printed %q, want the header %q and one row", group, out, consumerPerfHeader)
		}
		checkConsumerPerfRow(t, lines[1], n, size, group != "", before, after)
	}
}

// checkConsumerPerfRow checks one ConsumerPerformance summary row for n
// records of size bytes (no keys), printed by a run between before and
// after.
func checkConsumerPerfRow(t *testing.T, row string, n, size int, grouped bool, before, after time.Time) {
	t.Helper()
	f := strings.Split(row, ", ")
	if len(f) != 10 {
		t.Fatalf("row %q has %d fields, want 10", row, len(f))
	}
	const layout = "2006-01-02 15:04:05.000" // Kafka's yyyy-MM-dd HH:mm:ss:SSS, with a '.' for Go
	toTime := func(s string) time.Time {
		t.Helper()
		if i := strings.LastIndex(s, ":"); i > 0 {
			s = s[:i] + "." + s[i+1:]
		}
		tm, err := time.ParseInLocation(layout, s, time.Local)
		if err != nil {
			t.Fatalf("row %q: time %q: %v", row, s, err)
		}
		return tm
	}
	start, end := toTime(f[0]), toTime(f[1])
	// Both times carry their milliseconds (they printed ":000" once).
	if start.Before(before.Truncate(time.Millisecond)) || end.Before(start) || end.After(after) {
		t.Fatalf("row %q: start %v, end %v, want within the run %v .. %v", row, start, end, before, after)
	}
	if want := fmt.Sprintf("%.4f", float64(n*size)/(1<<20)); f[2] != want {
		t.Fatalf("row %q: data.consumed.in.MB %s, want %s", row, f[2], want)
	}
	if f[4] != strconv.Itoa(n) {
		t.Fatalf("row %q: data.consumed.in.nMsg %s, want %d", row, f[4], n)
	}
	var v [10]float64
	for _, i := range []int{2, 3, 5, 6, 7, 8, 9} {
		x, err := strconv.ParseFloat(f[i], 64)
		if err != nil || x < 0 {
			t.Fatalf("row %q: field %d %q is not a non-negative number", row, i+1, f[i])
		}
		v[i] = x
	}
	// nMsg.sec / MB.sec (and their fetch.* twins) is records per MiB,
	// whatever the elapsed time.
	perMiB := float64(1<<20) / float64(size)
	for _, pair := range [][2]int{{5, 3}, {9, 8}} {
		msgs, mb := v[pair[0]], v[pair[1]]
		if pair[0] == 9 && v[7] == 0 {
			// Every record came with the group's first fetch: a fetch time
			// of 0 ms leaves no rate to check (the tool prints 0).
			continue
		}
		if mb < 0.01 {
			t.Fatalf("row %q: %v MB/sec is too small to check", row, mb)
		}
		if r := msgs / mb; math.Abs(r-perMiB)/perMiB > 0.01 {
			t.Fatalf("row %q: fields %d/%d = %.2f records per MB, want %.2f", row, pair[0]+1, pair[1]+1, r, perMiB)
		}
	}
	rebalance, fetch := v[6], v[7]
	if !grouped && rebalance != 0 {
		t.Fatalf("row %q: rebalance.time.ms %v without a group", row, rebalance)
	}
	if elapsed := float64(end.Sub(start).Milliseconds()); rebalance+fetch > elapsed+2 {
		t.Fatalf("row %q: rebalance %v + fetch %v ms exceed the run's %v ms", row, rebalance, fetch, elapsed)
	}
}

// quickRaceExit makes the tools this test runs exit at once: a -race
// binary otherwise sleeps 1 s at exit (GORACE atexit_sleep_ms) to let
// other goroutines report, which adds up over dozens of tool runs. Races
// are still reported and still fail the run.
func quickRaceExit(t *testing.T) {
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}
