package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// finalLineRE matches producer-perf-test's final line (Kafka's format).
var finalLineRE = regexp.MustCompile(`(?m)^(\d+) records sent, ([0-9.]+) records/sec \(([0-9.]+) MB/sec\).*$`)

// perfRun runs `gregor producer-perf-test` for n records of 1 KiB against
// bootstrap with the given acks, at most rate records/s (-1: unthrottled)
// and uncompressed (Kafka's compression.type default; the tool's payload
// is one repeated string, which a codec would shrink to almost nothing),
// and returns its final line and records/sec. extra are more flags of the
// tool (before --producer-props).
func perfRun(t *testing.T, bootstrap, topic string, n int, acks string, rate int, extra ...string) (string, float64) {
	t.Helper()
	_, line, rps := perfRunOut(t, bootstrap, topic, n, acks, rate, extra...)
	return line, rps
}

// perfRunOut is perfRun that also returns the tool's whole output.
func perfRunOut(t *testing.T, bootstrap, topic string, n int, acks string, rate int, extra ...string) (string, string, float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"producer-perf-test", "--topic", topic, "--num-records", strconv.Itoa(n), "--record-size", "1024",
		"--throughput", strconv.Itoa(rate), "--reporting-interval", "60000"}
	args = append(args, extra...)
	args = append(args, "--producer-props", "bootstrap.servers="+bootstrap, "acks="+acks, "compression.type=none")
	out, err := exec.CommandContext(ctx, harness.Binary(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("gregor %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	m := finalLineRE.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no final line in:\n%s", out)
	}
	if sent, _ := strconv.Atoi(m[1]); sent != n {
		t.Fatalf("%d of %d records sent:\n%s", sent, n, out)
	}
	got, err := strconv.ParseFloat(m[2], 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("$ gregor %s\n%s", strings.Join(args, " "), m[0])
	return string(out), m[0], got
}

// TestClusterProducePerf measures, in one run, acks=all throughput of the
// 3-broker ZooKeeper cluster (RF 3, 3 partitions, 1 KiB records) against
// acks=1 throughput of a single embedded-mode broker (RF 1, 3 partitions),
// both with `gregor producer-perf-test`, and prints both lines and their
// ratio. Then, for the end-to-end latency at a fixed moderate rate rather
// than at saturation (where the producer's buffer, not the broker, makes
// most of the latency), each setup is run again throttled to
// GREGOR_PERF_RATE records/s (default 10000) for GREGOR_PERF_RATE_SECONDS
// (default 5) and that line printed too. Before each measurement one
// acks=all record goes to every partition (warmUp). It is a measurement,
// not an assertion: it runs only with GREGOR_CLUSTER_PERF=1
// (GREGOR_PERF_RECORDS sets the record count, default 200000). Run it
// without -race for meaningful numbers.
func TestClusterProducePerf(t *testing.T) {
	if os.Getenv("GREGOR_CLUSTER_PERF") != "1" {
		t.Skip("a measurement: set GREGOR_CLUSTER_PERF=1 to run it")
	}
	n := 200000
	if v, err := strconv.Atoi(os.Getenv("GREGOR_PERF_RECORDS")); err == nil && v > 0 {
		n = v
	}
	rate, secs := 10000, 5
	if v, err := strconv.Atoi(os.Getenv("GREGOR_PERF_RATE")); err == nil && v > 0 {
		rate = v
	}
	if v, err := strconv.Atoi(os.Getenv("GREGOR_PERF_RATE_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	const topic = "perf"

	single := harness.StartBroker(t, map[string]string{"num.partitions": "3"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(single.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, 3, 1, nil, topic)
	cl.Close()
	if err == nil {
		err = resp[topic].Err
	}
	if err != nil {
		t.Fatalf("single node: create %s: %v", topic, err)
	}
	warmUp(t, []string{single.Addr()}, topic, 3)
	singleLine, singleRate := perfRun(t, single.Addr(), topic, n, "1", -1)
	singleFixed, _ := perfRun(t, single.Addr(), topic, rate*secs, "all", rate)
	single.Stop()
	// Its log (a GiB at a million records) would otherwise stay in the
	// page cache, dirty, until the test ends: the cluster, which writes
	// three times as much, would then reach the kernel's writeback
	// thresholds early and have its appends throttled for the single
	// node's data.
	if err := os.RemoveAll(single.DataDir); err != nil {
		t.Fatal(err)
	}

	c := startCluster(t, 3, nil, nil)
	c.createTopic(topic, 3, 3, nil)
	for p := int32(0); p < 3; p++ {
		c.waitServing(topic, p, 20*time.Second)
	}
	warmUp(t, c.seeds(), topic, 3)
	stopProfiles := profileBrokers(t, c)
	cpu0 := c.brokersCPU()
	clusterLine, clusterRate := perfRun(t, strings.Join(c.seeds(), ","), topic, n, "all", -1)
	cpu := c.brokersCPU() - cpu0
	stopProfiles()
	clusterFixed, _ := perfRun(t, strings.Join(c.seeds(), ","), topic, rate*secs, "all", rate)

	fmt.Printf("single node, acks=1, RF 1:    %s\n", singleLine)
	fmt.Printf("3-broker cluster, acks=all, RF 3: %s\n", clusterLine)
	fmt.Printf("cluster acks=all / single-node acks=1 = %.2f\n", clusterRate/singleRate)
	fmt.Printf("3-broker cluster CPU (3 brokers, process_cpu_seconds_total): %.2f s, %.2f µs/record\n", cpu, cpu/float64(n)*1e6)
	fmt.Printf("single node, acks=all, RF 1, --throughput %d: %s\n", rate, singleFixed)
	fmt.Printf("3-broker cluster, acks=all, RF 3, --throughput %d: %s\n", rate, clusterFixed)
}

// warmUp produces one acks=all record to each of the topic's partitions
// and waits for every acknowledgement, so the measurement starts with
// every follower's fetcher running. A follower that fetched before its
// leader had applied the new LeaderAndIsr backs off for
// replica.fetch.backoff.ms (1 s, as in Kafka) after the partition error;
// without the warm-up that start-up pause falls inside the run and shows
// as a one-second p99 of a two-second measurement.
func warmUp(t *testing.T, seeds []string, topic string, partitions int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for p := int32(0); p < partitions; p++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("warm-up")}).FirstErr(); err != nil {
			t.Fatalf("warm-up produce to %s-%d: %v", topic, p, err)
		}
	}
}

// brokersCPU is the CPU time, in seconds, all brokers of c have used
// (process_cpu_seconds_total): unlike throughput, it barely moves when
// other work shares the machine.
func (c *cluster) brokersCPU() float64 {
	var sum float64
	for id := range c.admins {
		sum += c.mustMetric(id, "process_cpu_seconds_total")
	}
	return sum
}

// profileBrokers, with GREGOR_PERF_PPROF set to a directory, records a
// CPU profile of every broker (its admin listener's /debug/pprof/profile)
// for GREGOR_PERF_PPROF_SECONDS (default 3) while the cluster run goes
// on; the returned func waits for the profiles. Without it, it does
// nothing.
func profileBrokers(t *testing.T, c *cluster) func() {
	dir := os.Getenv("GREGOR_PERF_PPROF")
	if dir == "" {
		return func() {}
	}
	secs := os.Getenv("GREGOR_PERF_PPROF_SECONDS")
	if secs == "" {
		secs = "3"
	}
	var wg sync.WaitGroup
	for id, url := range c.admins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(url + "/debug/pprof/profile?seconds=" + secs)
			if err != nil {
				t.Errorf("profile broker %d: %v", id, err)
				return
			}
			defer resp.Body.Close()
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("broker-%d.pprof", id)))
			if err != nil {
				t.Errorf("profile broker %d: %v", id, err)
				return
			}
			defer f.Close()
			if _, err := io.Copy(f, resp.Body); err != nil {
				t.Errorf("profile broker %d: %v", id, err)
			}
		}()
	}
	return wg.Wait
}
