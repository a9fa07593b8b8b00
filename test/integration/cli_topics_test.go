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
	if out := describe("--under-min-isr-partitions"); out != "\tTopic: strict\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: N/A\tLastKnownElr: N/A\n\tTopic: strict\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: N/A\tLastKnownElr: N/A\n" {
		t.Fatalf("--under-min-isr-partitions printed %q", out)
	}
	if out := describe("--at-min-isr-partitions"); out != "\tTopic: loose\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: N/A\tLastKnownElr: N/A\n" {
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

// kafka-topics.sh --replica-assignment against the real broker: create
// places the partitions as listed (CreateTopics with ReplicaAssignment),
// --alter adds the entries past the existing partitions
// (CreatePartitions with Assignment); the controller's refusals come back
// with its INVALID_REPLICA_ASSIGNMENT messages, Kafka's option checks
// refuse before anything is sent, and nothing is created on a refusal.
func TestCLITopicsReplicaAssignment(t *testing.T) {
	b := harness.StartBroker(t, nil)
	bs := b.Addr()
	topics := func(args ...string) (int, string, string) {
		t.Helper()
		return cliRun(t, nil, "kafka-topics.sh", append([]string{"--bootstrap-server", bs}, args...)...)
	}
	if code, out, errs := topics("--create", "--topic", "placed", "--replica-assignment", "0,0"); code != 0 || out != "Created topic placed.\n" {
		t.Fatalf("create: %d %q %q", code, out, errs)
	}
	if code, out, errs := topics("--alter", "--topic", "placed", "--partitions", "3", "--replica-assignment", "0,0,0"); code != 0 || out != "" {
		t.Fatalf("alter: %d %q %q", code, out, errs)
	}
	code, out, errs := topics("--describe", "--topic", "placed")
	if code != 0 || !strings.Contains(out, "PartitionCount: 3\tReplicationFactor: 1") || !strings.Contains(out, "\tPartition: 2\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: N/A\tLastKnownElr: N/A\n") {
		t.Fatalf("describe: %d %q %q", code, out, errs)
	}
	const prefix = "Error while executing topic command : "
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--create", "--topic", "ghost", "--replica-assignment", "0:1"}, prefix + "Unknown broker(s) in replica assignment: 1.\n"},
		{[]string{"--create", "--topic", "ghost", "--replica-assignment", "0:0"}, prefix + "Partition replica lists may not contain duplicate entries: 0\n"},
		{[]string{"--create", "--topic", "ghost", "--replica-assignment", "0,0:1"}, prefix + "Partition 1 has different replication factor: [0, 1]\n"},
		{[]string{"--create", "--topic", "ghost", "--replica-assignment", "0", "--partitions", "1"}, prefix + `Option "[replica-assignment]" can't be used with option "[partitions]"` + "\n"},
		{[]string{"--create", "--topic", "ghost", "--replica-assignment", "0", "--replication-factor", "1"}, prefix + `Option "[replica-assignment]" can't be used with option "[replication-factor]"` + "\n"},
		{[]string{"--alter", "--topic", "placed", "--partitions", "4", "--replica-assignment", "0,0,0,5"}, prefix + "Unknown broker(s) in replica assignment: 5.\n"},
		{[]string{"--alter", "--topic", "placed", "--partitions", "5", "--replica-assignment", "0,0,0,0"}, prefix + "Increasing the number of partitions by 2 but 1 assignments provided.\n"},
	} {
		if code, out, errs := topics(c.args...); code != 1 || out != "" || errs != c.want {
			t.Errorf("%v: %d %q %q; want %q", c.args, code, out, errs, c.want)
		}
	}
	if code, out, _ := topics("--list", "--exclude-internal"); code != 0 || out != "placed\n" {
		t.Fatalf("list after refusals: %d %q (a refused create left a topic behind?)", code, out)
	}
	if code, out, _ := topics("--describe", "--topic", "placed"); code != 0 || !strings.Contains(out, "PartitionCount: 3\t") {
		t.Fatalf("refused alters changed the topic: %q", out)
	}
}
