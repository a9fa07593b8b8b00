package integration

import (
	"strings"
	"testing"

	"gregor/test/harness"
)

// kafka-topics.sh --describe's replication reports against the real
// broker: min.insync.replicas comes from DescribeConfigs (a topic override
// of 2 over a one-replica ISR is under it; the default 1 is at it), the
// live brokers from Metadata; only the selected partition lines print.
func TestCLITopicsDescribeReports(t *testing.T) {
	b := harness.StartBroker(t, nil)
	bs := b.Addr()
	for _, args := range [][]string{
		{"--topic", "strict", "--partitions", "2", "--config", "min.insync.replicas=2"},
		{"--topic", "loose", "--partitions", "1"},
	} {
		if code, out, errs := cliRun(t, nil, "kafka-topics.sh", append([]string{"--bootstrap-server", bs, "--create", "--replication-factor", "1"}, args...)...); code != 0 {
			t.Fatalf("create %v: %d %q %q", args, code, out, errs)
		}
	}
	describe := func(flag string) string {
		t.Helper()
		code, out, errs := cliRun(t, nil, "kafka-topics.sh", "--bootstrap-server", bs, "--describe", "--topic", "strict,loose", flag)
		if code != 0 || errs != "" {
			t.Fatalf("--describe %s: %d %q %q", flag, code, out, errs)
		}
		return out
	}
	if out := describe("--under-min-isr-partitions"); out != "\tTopic: strict\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\n\tTopic: strict\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0\n" {
		t.Fatalf("--under-min-isr-partitions printed %q", out)
	}
	if out := describe("--at-min-isr-partitions"); out != "\tTopic: loose\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\n" {
		t.Fatalf("--at-min-isr-partitions printed %q", out)
	}
	for _, flag := range []string{"--under-replicated-partitions", "--unavailable-partitions"} {
		if out := describe(flag); out != "" {
			t.Fatalf("%s on a healthy broker printed %q", flag, out)
		}
	}
	// Without a report flag the summary lines are there as before.
	if out := describe("--exclude-internal"); strings.Count(out, "PartitionCount:") != 2 {
		t.Fatalf("plain describe printed %q", out)
	}
}
