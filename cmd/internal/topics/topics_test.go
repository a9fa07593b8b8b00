package topics

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

func cluster(t *testing.T, brokers int) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

// run runs the command and returns exit code, stdout, stderr.
func run(t *testing.T, o Options) (int, string, string) {
	t.Helper()
	if o.Partitions == 0 {
		o.Partitions = -1
	}
	if o.ReplicationFactor == 0 {
		o.ReplicationFactor = -1
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), o, nil, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCreateListDescribeAlterDelete(t *testing.T) {
	bs := cluster(t, 3)
	code, out, errs := run(t, Options{BootstrapServer: bs, Create: true, Topic: "orders", Partitions: 2, ReplicationFactor: 3,
		Configs: []string{"retention.ms=1000", "cleanup.policy = compact"}})
	if code != 0 || out != "Created topic orders.\n" || errs != "" {
		t.Fatalf("create: %d %q %q", code, out, errs)
	}
	if code, out, _ = run(t, Options{BootstrapServer: bs, Create: true, Topic: "a.b", Partitions: 1, ReplicationFactor: 1}); code != 0 {
		t.Fatalf("create a.b: %d", code)
	}

	// Creating it again: one readable error line, exit 1; --if-not-exists: silent success.
	code, out, errs = run(t, Options{BootstrapServer: bs, Create: true, Topic: "orders"})
	if code != 1 || out != "" || errs != "Error while executing topic command : Topic 'orders' already exists.\n" {
		t.Fatalf("duplicate create: %d %q %q", code, out, errs)
	}
	if code, out, errs = run(t, Options{BootstrapServer: bs, Create: true, Topic: "orders", IfNotExists: true}); code != 0 || out != "" {
		t.Fatalf("if-not-exists: %d %q %q", code, out, errs)
	}

	code, out, _ = run(t, Options{BootstrapServer: bs, List: true})
	if code != 0 || out != "a.b\norders\n" {
		t.Fatalf("list: %d %q", code, out)
	}

	code, out, errs = run(t, Options{BootstrapServer: bs, Describe: true, Topic: "orders"})
	if code != 0 {
		t.Fatalf("describe: %d %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("describe printed %d lines:\n%s", len(lines), out)
	}
	head := regexp.MustCompile(`^Topic: orders\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: (.*)$`)
	m := head.FindStringSubmatch(lines[0])
	if m == nil {
		t.Fatalf("summary line %q", lines[0])
	}
	if !strings.Contains(m[1], "cleanup.policy=compact") || !strings.Contains(m[1], "retention.ms=1000") {
		t.Errorf("configs %q lack the overrides", m[1])
	}
	part := regexp.MustCompile(`^\tTopic: orders\tPartition: (\d)\tLeader: (\d)\tReplicas: (\d,\d,\d)\tIsr: (\d,\d,\d)\tElr: N/A\tLastKnownElr: N/A$`)
	for i, l := range lines[1:] {
		pm := part.FindStringSubmatch(l)
		if pm == nil || pm[1] != string(rune('0'+i)) || !strings.HasPrefix(pm[3], pm[2]) {
			t.Errorf("partition line %q", l)
		}
	}

	// --alter --partitions grows the topic.
	if code, _, errs = run(t, Options{BootstrapServer: bs, Alter: true, Topic: "orders", Partitions: 4}); code != 0 {
		t.Fatalf("alter: %d %q", code, errs)
	}
	_, out, _ = run(t, Options{BootstrapServer: bs, Describe: true, Topic: "orders"})
	if !strings.Contains(out, "PartitionCount: 4") || !strings.Contains(out, "\tPartition: 3\t") {
		t.Fatalf("after alter:\n%s", out)
	}

	// Describe without --topic covers all topics, in name order.
	_, out, _ = run(t, Options{BootstrapServer: bs, Describe: true})
	if i, j := strings.Index(out, "Topic: a.b\t"), strings.Index(out, "Topic: orders\t"); i < 0 || j < i {
		t.Fatalf("describe all:\n%s", out)
	}

	if code, _, errs = run(t, Options{BootstrapServer: bs, Delete: true, Topic: "orders"}); code != 0 {
		t.Fatalf("delete: %d %q", code, errs)
	}
	_, out, _ = run(t, Options{BootstrapServer: bs, List: true})
	if out != "a.b\n" {
		t.Fatalf("list after delete: %q", out)
	}
	code, _, errs = run(t, Options{BootstrapServer: bs, Delete: true, Topic: "orders"})
	if code != 1 || errs != "Error while executing topic command : Topic 'orders' does not exist as expected\n" {
		t.Fatalf("delete missing: %d %q", code, errs)
	}
	if code, _, _ = run(t, Options{BootstrapServer: bs, Delete: true, Topic: "orders", IfExists: true}); code != 0 {
		t.Fatalf("delete --if-exists: %d", code)
	}
	if code, _, errs = run(t, Options{BootstrapServer: bs, Describe: true, Topic: "nope"}); code != 1 || !strings.Contains(errs, "'nope' does not exist") {
		t.Fatalf("describe missing: %d %q", code, errs)
	}
}

func TestTopicPatternAndInternal(t *testing.T) {
	names := []string{"__consumer_offsets", "logs-a", "logs-b", "metrics"}
	a := &fakeAdmin{topics: names}
	var out bytes.Buffer
	if err := Run(context.Background(), Options{List: true, Topic: "logs-.*"}, a, &out); err != nil || out.String() != "logs-a\nlogs-b\n" {
		t.Fatalf("regex list: %v %q", err, out.String())
	}
	out.Reset()
	if err := Run(context.Background(), Options{List: true, Topic: "metrics,logs-a"}, a, &out); err != nil || out.String() != "logs-a\nmetrics\n" {
		t.Fatalf("comma list: %v %q", err, out.String())
	}
	out.Reset()
	if err := Run(context.Background(), Options{List: true, ExcludeInternal: true}, a, &out); err != nil || out.String() != "logs-a\nlogs-b\nmetrics\n" {
		t.Fatalf("exclude internal: %v %q", err, out.String())
	}
}

func TestFormatDescription(t *testing.T) {
	got := FormatDescription(TopicDescription{Name: "t", Configs: []ConfigValue{{"a", "1"}, {"b", "2"}},
		Partitions: []PartitionDescription{{Partition: 0, Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1}}, {Partition: 1, Leader: -1, Replicas: []int32{2, 1}}}})
	want := "Topic: t\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: a=1,b=2\n" +
		"\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1\tElr: N/A\tLastKnownElr: N/A\n" +
		"\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,1\tIsr: \tElr: N/A\tLastKnownElr: N/A\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	// A reassignment under way (Kafka 3.9's TopicCommand): its replicas
	// after the ISR, and the replication factor without those being added.
	got = FormatDescription(TopicDescription{Name: "t", Partitions: []PartitionDescription{
		{Partition: 0, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, Reassignment: &Reassignment{Adding: []int32{3}, Removing: []int32{2}}},
	}})
	want = "Topic: t\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \n" +
		"\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\tAdding Replicas: 3\tRemoving Replicas: 2\tElr: N/A\tLastKnownElr: N/A\n"
	if got != want {
		t.Errorf("reassigning: got\n%q\nwant\n%q", got, want)
	}
	// Kafka 2.x's --zookeeper form has neither.
	got = FormatDescription(TopicDescription{Name: "t", FromZooKeeper: true, Partitions: []PartitionDescription{{Partition: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}})
	if want := "Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n"; got != want {
		t.Errorf("zookeeper form: got\n%q\nwant\n%q", got, want)
	}
}

func TestArgumentErrors(t *testing.T) {
	cases := []struct {
		o    Options
		code int
		msg  string
	}{
		{Options{BootstrapServer: "h:1"}, 1, "exactly one action"},
		{Options{BootstrapServer: "h:1", List: true, Create: true}, 1, "exactly one action"},
		{Options{List: true}, 1, "bootstrap-server"},
		{Options{BootstrapServer: "h:1", Create: true}, 1, "[topic]"},
		{Options{BootstrapServer: "h:1", Create: true, Topic: "t", ReplicationFactor: 40000}, 1, "between 1 and 32767"},
		{Options{BootstrapServer: "h:1", Create: true, Topic: "t", Partitions: -5}, 1, "greater than 0"},
		{Options{BootstrapServer: "h:1", Alter: true, Topic: "t"}, 1, "--partitions"},
		{Options{BootstrapServer: "h:1", List: true, IfNotExists: true}, 1, "if-not-exists"},
		{Options{BootstrapServer: "nocolon", List: true}, 1, "host:port"},
		{Options{ZooKeeper: "localhost:2181/bad//chroot", List: true}, 1, "--zookeeper"},
	}
	for _, c := range cases {
		if c.o.Partitions == 0 {
			c.o.Partitions = -1
		}
		code, out, errs := run(t, c.o)
		if code != c.code || out != "" || !strings.Contains(errs, c.msg) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%+v: code %d out %q err %q; want %d and %q", c.o, code, out, errs, c.code, c.msg)
		}
	}
}

// fakeAdmin serves ListTopics only (pattern tests).
type fakeAdmin struct {
	Admin
	topics []string
}

func (f *fakeAdmin) ListTopics(context.Context) ([]string, error) { return f.topics, nil }

// Kafka's TopicCommand warns on create for a name with a '.' or a '_'
// (Topic.hasCollisionChars: either one, not both), as the seeds' topic_1 is.
func TestCreateWarnsOnCollisionChars(t *testing.T) {
	bs := cluster(t, 1)
	const warn = "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.\n"
	for topic, want := range map[string]string{
		"topic_1": warn + "Created topic topic_1.\n",
		"a.b":     warn + "Created topic a.b.\n",
		"a.b_c":   warn + "Created topic a.b_c.\n",
		"plain":   "Created topic plain.\n",
	} {
		code, out, errs := run(t, Options{BootstrapServer: bs, Create: true, Topic: topic, Partitions: 1, ReplicationFactor: 1})
		if code != 0 || out != want || errs != "" {
			t.Errorf("create %s: %d %q %q; want %q", topic, code, out, errs, want)
		}
	}
}
