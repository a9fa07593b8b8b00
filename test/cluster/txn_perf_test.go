package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// commitLineRE matches the commit-latency line `producer-perf-test
// --print-latency-us` prints after a transactional run.
var commitLineRE = regexp.MustCompile(`(?m)^(\d+) transactions committed, commit latency: (\d+) us 50th, (\d+) us 99th, (\d+) us max; EndTxn alone: (\d+) us 50th, (\d+) us 99th\.$`)

// TestTxnProducePerf measures, in one run on one single node (embedded
// metadata, 3 partitions, 1 KiB records, uncompressed, unthrottled),
// franz-go's idempotent acks=all produce against transactional produce
// committing every 100 ms (`producer-perf-test --transaction-duration-ms
// 100`, Kafka's ProducerPerformance loop), alternating A B A B over
// GREGOR_PERF_ROUNDS rounds (default 2) of GREGOR_PERF_RECORDS records
// (default 200000), each round on a fresh topic. It prints every line, the
// ratio of the median throughputs, the commit latency p50/p99 (flush plus
// EndTxn, as Java's commitTransaction) and the broker's CPU per record for
// each mode. With GREGOR_PERF_PPROF set to a directory it saves a broker
// CPU profile of the first transactional round. A measurement, not an
// assertion: it runs only with GREGOR_TXN_PERF=1; run it without -race.
func TestTxnProducePerf(t *testing.T) {
	if os.Getenv("GREGOR_TXN_PERF") != "1" {
		t.Skip("a measurement: set GREGOR_TXN_PERF=1 to run it")
	}
	n, rounds := 200000, 2
	if v, err := strconv.Atoi(os.Getenv("GREGOR_PERF_RECORDS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("GREGOR_PERF_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	admin := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	b := harness.StartBroker(t, map[string]string{"num.partitions": "3", "admin.listener": admin})
	adminURL := "http://" + admin
	hc := &http.Client{Timeout: 10 * time.Second}
	cpu := func() float64 {
		v, _, err := harness.MetricSum(hc, adminURL, "process_cpu_seconds_total")
		if err != nil {
			t.Fatalf("broker CPU: %v", err)
		}
		return v
	}

	type run struct {
		line          string
		rps, cpuPerRc float64 // records/s, broker CPU µs per record
		commits       string
		p50, p99      int64 // commit latency, µs
		e50, e99      int64 // EndTxn alone, µs
	}
	var idem, txn []run
	for r := 0; r < rounds; r++ {
		for _, transactional := range []bool{false, true} {
			topic := fmt.Sprintf("perf-idem-%d", r)
			var extra []string
			if transactional {
				topic = fmt.Sprintf("perf-txn-%d", r)
				extra = []string{"--transaction-duration-ms", "100", "--print-latency-us"}
			}
			createPerfTopic(t, b.Addr(), topic)
			warmUp(t, []string{b.Addr()}, topic, 3)
			stop := func() {}
			if transactional && r == 0 {
				stop = profileBroker(t, adminURL, "txn")
			}
			cpu0 := cpu()
			out, line, rps := perfRunOut(t, b.Addr(), topic, n, "all", -1, extra...)
			used := cpu() - cpu0
			stop()
			res := run{line: line, rps: rps, cpuPerRc: used / float64(n) * 1e6}
			if transactional {
				m := commitLineRE.FindStringSubmatch(out)
				if m == nil {
					t.Fatalf("no commit latency line in:\n%s", out)
				}
				res.commits = m[0]
				res.p50, _ = strconv.ParseInt(m[2], 10, 64)
				res.p99, _ = strconv.ParseInt(m[3], 10, 64)
				res.e50, _ = strconv.ParseInt(m[5], 10, 64)
				res.e99, _ = strconv.ParseInt(m[6], 10, 64)
				txn = append(txn, res)
			} else {
				idem = append(idem, res)
			}
			deletePerfTopic(t, b.Addr(), topic) // keeps the page cache from filling with old rounds
		}
	}
	median := func(rs []run, f func(run) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 0 {
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		return v[len(v)/2]
	}
	for i := range idem {
		fmt.Printf("round %d idempotent (acks=all):        %s (broker %.2f µs CPU/record)\n", i, idem[i].line, idem[i].cpuPerRc)
		fmt.Printf("round %d transactional (100 ms txns): %s (broker %.2f µs CPU/record)\n", i, txn[i].line, txn[i].cpuPerRc)
		fmt.Printf("round %d %s\n", i, txn[i].commits)
	}
	rate := func(r run) float64 { return r.rps }
	fmt.Printf("transactional / idempotent throughput (medians of %d rounds) = %.2f\n", rounds, median(txn, rate)/median(idem, rate))
	fmt.Printf("commit latency (median over rounds): p50 %.1f ms, p99 %.1f ms\n",
		median(txn, func(r run) float64 { return float64(r.p50) })/1000, median(txn, func(r run) float64 { return float64(r.p99) })/1000)
	fmt.Printf("EndTxn alone (median over rounds): p50 %.1f ms, p99 %.1f ms\n",
		median(txn, func(r run) float64 { return float64(r.e50) })/1000, median(txn, func(r run) float64 { return float64(r.e99) })/1000)
	fmt.Printf("broker CPU per record (medians): idempotent %.2f µs, transactional %.2f µs\n",
		median(idem, func(r run) float64 { return r.cpuPerRc }), median(txn, func(r run) float64 { return r.cpuPerRc }))
}

func createPerfTopic(t *testing.T, addr, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, 3, 1, nil, topic)
	if err == nil {
		err = resp[topic].Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

func deletePerfTopic(t *testing.T, addr, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).DeleteTopics(ctx, topic)
	if err == nil {
		err = resp[topic].Err
	}
	if err != nil {
		t.Fatalf("delete %s: %v", topic, err)
	}
}

// profileBroker, with GREGOR_PERF_PPROF set to a directory, records a
// CPU profile of the broker at adminURL for GREGOR_PERF_PPROF_SECONDS
// (default 3) into <dir>/single-<name>.pprof; the returned func waits for
// it. Without it, it does nothing.
func profileBroker(t *testing.T, adminURL, name string) func() {
	dir := os.Getenv("GREGOR_PERF_PPROF")
	if dir == "" {
		return func() {}
	}
	secs := os.Getenv("GREGOR_PERF_PPROF_SECONDS")
	if secs == "" {
		secs = "3"
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get(adminURL + "/debug/pprof/profile?seconds=" + secs)
		if err != nil {
			t.Errorf("profile: %v", err)
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(fmt.Sprintf("%s/single-%s.pprof", dir, name))
		if err != nil {
			t.Errorf("profile: %v", err)
			return
		}
		defer f.Close()
		if _, err := f.ReadFrom(resp.Body); err != nil {
			t.Errorf("profile: %v", err)
		}
	}()
	return func() { <-done }
}
