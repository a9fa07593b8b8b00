package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// produceValues writes values "prefix-i" for i in [from, to) spread over the
// topic's partitions, and fails the test on any error.
func produceValues(t *testing.T, b *harness.Broker, topic, prefix string, from, to int) {
	t.Helper()
	cl := b.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression())) // readable by every client without codec libraries
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := from; i < to; i++ {
		cl.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func lines(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	out := strings.Split(s, "\n")
	sort.Strings(out)
	return out
}

// TestKcatBalancedConsumerCommitsAndResumes: kcat's balanced consumer
// (-G group) reads everything, commits, and a second run in the same group
// reads only what was produced after.
func TestKcatBalancedConsumerCommitsAndResumes(t *testing.T) {
	_, err := exec.LookPath("kcat")
	harness.NeedTool(t, err == nil, "kcat")
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "kg", 3, nil)
	produceValues(t, b, "kg", "first", 0, 60)
	out := run(t, time.Minute, "", "kcat", "-b", b.Addr(), "-G", "kcat-group", "-X", "auto.offset.reset=earliest", "-c", "60", "-f", "%s\n", "kg")
	if got := lines(out); len(got) != 60 || got[0] != "first-0" {
		t.Fatalf("first run read %d records: %v", len(got), got)
	}
	produceValues(t, b, "kg", "second", 0, 9)
	out = run(t, time.Minute, "", "kcat", "-b", b.Addr(), "-G", "kcat-group", "-X", "auto.offset.reset=earliest", "-c", "9", "-f", "%s\n", "kg")
	for _, l := range lines(out) {
		if !strings.HasPrefix(l, "second-") {
			t.Fatalf("second run re-read %q: the group's commit was lost", l)
		}
	}
	if n := len(lines(out)); n != 9 {
		t.Fatalf("second run read %d records, want 9", n)
	}

	// The consumer-groups tool sees the group and its committed offsets.
	list := binScript(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b.Addr(), "--list")
	if !strings.Contains(list, "kcat-group") {
		t.Fatalf("--list lacks kcat-group:\n%s", list)
	}
	desc := binScript(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b.Addr(), "--describe", "--group", "kcat-group")
	rows := 0
	for _, l := range strings.Split(desc, "\n") {
		f := strings.Fields(l)
		if len(f) >= 6 && f[0] == "kcat-group" && f[1] == "kg" {
			rows++
			if f[3] != f[4] || f[5] != "0" { // CURRENT-OFFSET == LOG-END-OFFSET, LAG 0
				t.Errorf("describe row %q: want current offset = log end offset and lag 0", l)
			}
		}
	}
	if rows != 3 || !strings.Contains(desc, "CURRENT-OFFSET") {
		t.Fatalf("describe shows %d partition rows, want 3:\n%s", rows, desc)
	}
}

// TestKafkaPythonGroupCommitAndResume: kafka-python's KafkaConsumer with a
// group_id commits, and a new consumer in the group starts after the commit.
func TestKafkaPythonGroupCommitAndResume(t *testing.T) {
	py := "/usr/bin/python3"
	harness.NeedTool(t, exec.Command(py, "-c", "import kafka").Run() == nil, "kafka-python (python3-kafka)")
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "pyg", 2, nil)
	produceValues(t, b, "pyg", "a", 0, 40)
	script := `
import sys
from kafka import KafkaConsumer
addr, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = KafkaConsumer(topic, bootstrap_servers=addr, group_id='pygroup', auto_offset_reset='earliest',
                  enable_auto_commit=False, consumer_timeout_ms=15000)
got = []
for m in c:
    got.append(m.value.decode())
    if len(got) == n:
        break
c.commit()
c.close()
print("\n".join(sorted(got)))
`
	f := filepath.Join(t.TempDir(), "group.py")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := lines(run(t, 2*time.Minute, "", py, f, b.Addr(), "pyg", "40")); len(got) != 40 {
		t.Fatalf("first consumer read %d records, want 40", len(got))
	}
	produceValues(t, b, "pyg", "b", 0, 7)
	got := lines(run(t, 2*time.Minute, "", py, f, b.Addr(), "pyg", "7"))
	if len(got) != 7 || !strings.HasPrefix(got[0], "b-") || !strings.HasPrefix(got[6], "b-") {
		t.Fatalf("resumed consumer read %v, want exactly the 7 new records", got)
	}
}

// TestConsoleConsumersInOneGroupSplitPartitions runs the seed article's
// console consumer with --group twice at once: together they read every
// record, each from its own partition.
func TestConsoleConsumersInOneGroupSplitPartitions(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "split", 2, nil)
	bin := harness.Binary(t)
	type proc struct {
		cmd *exec.Cmd
		out bytes.Buffer
	}
	var ps [2]*proc
	for i := range ps {
		p := &proc{cmd: exec.Command(bin, "console-consumer", "--bootstrap-server", b.Addr(), "--topic", "split",
			"--group", "console-g", "--from-beginning", "--timeout-ms", "8000")}
		p.cmd.Stdout = &p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.cmd.Process.Kill() })
		ps[i] = p
	}
	// Wait until both members are in the group and it is stable. The group has
	// no committed offsets, so --from-beginning makes each member start at the
	// log start whenever its partition reaches it (cooperative-sticky may hand a
	// partition over after the group first looks stable).
	adm := kadm.NewClient(b.Client())
	deadline := time.Now().Add(45 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		dg, err := adm.DescribeGroups(ctx, "console-g")
		cancel()
		if err == nil && dg["console-g"].State == "Stable" && len(dg["console-g"].Members) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group never had 2 stable members: %+v %v", dg, err)
		}
		time.Sleep(100 * time.Millisecond) // polling the group's state over the admin API
	}
	produceValues(t, b, "split", "m", 0, 100)
	var all []string
	for i, p := range ps {
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("consumer %d: %v", i, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("consumer %d did not exit", i)
		}
		got := lines(p.out.String())
		if len(got) == 0 || len(got) == 100 {
			t.Fatalf("consumer %d read %d records; the two should split the partitions", i, len(got))
		}
		all = append(all, got...)
	}
	sort.Strings(all)
	if len(all) != 100 {
		t.Fatalf("together the consumers read %d records, want 100 (no duplicates, no loss)", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("record %s read twice", all[i])
		}
	}
}
