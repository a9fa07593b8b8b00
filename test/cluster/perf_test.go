package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// finalLineRE matches producer-perf-test's final line (Kafka's format).
var finalLineRE = regexp.MustCompile(`(?m)^(\d+) records sent, ([0-9.]+) records/sec \(([0-9.]+) MB/sec\).*$`)

// perfRun runs `gregor producer-perf-test` for n records of 1 KiB against
// bootstrap with the given acks, unthrottled and uncompressed (Kafka's
// compression.type default; the tool's payload is one repeated string,
// which a codec would shrink to almost nothing), and returns its final
// line and records/sec.
func perfRun(t *testing.T, bootstrap, topic string, n int, acks string) (string, float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"producer-perf-test", "--topic", topic, "--num-records", strconv.Itoa(n), "--record-size", "1024",
		"--throughput", "-1", "--reporting-interval", "60000",
		"--producer-props", "bootstrap.servers=" + bootstrap, "acks=" + acks, "compression.type=none"}
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
	rate, err := strconv.ParseFloat(m[2], 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("$ gregor %s\n%s", strings.Join(args, " "), m[0])
	return m[0], rate
}

// TestClusterProducePerf measures, in one run, acks=all throughput of the
// 3-broker ZooKeeper cluster (RF 3, 3 partitions, 1 KiB records) against
// acks=1 throughput of a single embedded-mode broker (RF 1, 3 partitions),
// both with `gregor producer-perf-test`, and prints both lines and their
// ratio. It is a measurement, not an assertion: it runs only with
// GREGOR_CLUSTER_PERF=1 (GREGOR_PERF_RECORDS sets the record count,
// default 200000). Run it without -race for meaningful numbers.
func TestClusterProducePerf(t *testing.T) {
	if os.Getenv("GREGOR_CLUSTER_PERF") != "1" {
		t.Skip("a measurement: set GREGOR_CLUSTER_PERF=1 to run it")
	}
	n := 200000
	if v, err := strconv.Atoi(os.Getenv("GREGOR_PERF_RECORDS")); err == nil && v > 0 {
		n = v
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
	singleLine, singleRate := perfRun(t, single.Addr(), topic, n, "1")
	single.Stop()

	c := startCluster(t, 3, nil, nil)
	c.createTopic(topic, 3, 3, nil)
	for p := int32(0); p < 3; p++ {
		c.waitServing(topic, p, 20*time.Second)
	}
	clusterLine, clusterRate := perfRun(t, strings.Join(c.seeds(), ","), topic, n, "all")

	fmt.Printf("single node, acks=1, RF 1:    %s\n", singleLine)
	fmt.Printf("3-broker cluster, acks=all, RF 3: %s\n", clusterLine)
	fmt.Printf("cluster acks=all / single-node acks=1 = %.2f\n", clusterRate/singleRate)
}
