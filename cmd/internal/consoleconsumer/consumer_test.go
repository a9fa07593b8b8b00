package consoleconsumer

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil/clienttest"
)

func TestFormatter(t *testing.T) {
	ts := time.UnixMilli(1700000000123)
	rec := &kgo.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: ts, Partition: 2, Offset: 7,
		Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("1")}, {Key: "n"}}}
	cases := []struct {
		props map[string]string
		rec   *kgo.Record
		want  string
	}{
		{nil, rec, "v\n"},
		{map[string]string{"print.key": "true"}, rec, "k\tv\n"},
		{map[string]string{"print.timestamp": "true", "print.key": "true"}, rec, "CreateTime:1700000000123\tk\tv\n"},
		{map[string]string{"print.timestamp": "true", "print.key": "true", "key.separator": " | "}, rec, "CreateTime:1700000000123 | k | v\n"},
		{map[string]string{"print.partition": "true", "print.offset": "true", "print.headers": "true", "print.value": "false"}, rec, "Partition:2\tOffset:7\th:1,n:null\n"},
		{map[string]string{"print.key": "true", "null.literal": "<nil>", "line.separator": ";"}, &kgo.Record{}, "<nil>\t<nil>;"},
		{map[string]string{"print.key": "true"}, &kgo.Record{Value: []byte{}}, "null\t\n"},
		{map[string]string{"print.headers": "true"}, &kgo.Record{Value: []byte("x")}, "NO_HEADERS\tx\n"},
	}
	for _, c := range cases {
		f, unknown := NewFormatter(c.props)
		if len(unknown) != 0 {
			t.Fatalf("unknown %v", unknown)
		}
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		f.Write(w, c.rec)
		w.Flush()
		if b.String() != c.want {
			t.Errorf("%v: got %q want %q", c.props, b.String(), c.want)
		}
	}
}

// setupCluster starts a one-broker cluster with topic "t" of partitions
// partitions holding records (a record without a Topic goes to "t").
func setupCluster(t *testing.T, partitions int32, records ...*kgo.Record) string {
	t.Helper()
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(partitions, "t"))
	for _, r := range records {
		if r.Topic == "" {
			r.Topic = "t"
		}
	}
	clienttest.Produce(t, addr, records...)
	return addr
}

// runTool runs Main; a zero Partition means "not given" (use runPartition
// for partition 0).
func runTool(t *testing.T, o Options) (int, string, string) {
	t.Helper()
	if o.Partition == 0 {
		o.Partition = -1
	}
	return runPartition(t, o)
}

func runPartition(t *testing.T, o Options) (int, string, string) {
	t.Helper()
	if o.MaxMessages == 0 {
		o.MaxMessages = -1
	}
	if o.TimeoutMs == 0 {
		o.TimeoutMs = -1
	}
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := Main(ctx, o, &out, &errb)
	return code, out.String(), errb.String()
}

func rec(p int32, k, v string) *kgo.Record {
	r := &kgo.Record{Partition: p, Value: []byte(v), Timestamp: time.UnixMilli(1000 + int64(len(v)))}
	if k != "" {
		r.Key = []byte(k)
	}
	return r
}

func TestMaxMessagesFromBeginning(t *testing.T) {
	addr := setupCluster(t, 1, rec(0, "a", "1"), rec(0, "", "two"), rec(0, "c", "3"), &kgo.Record{Partition: 0, Key: []byte("d")})
	code, out, errs := runTool(t, Options{BootstrapServer: addr, Topic: "t", FromBeginning: true, MaxMessages: 3,
		Properties: []string{"print.key=true", "print.timestamp=true"}})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if out != "CreateTime:1001\ta\t1\nCreateTime:1003\tnull\ttwo\nCreateTime:1001\tc\t3\n" {
		t.Fatalf("out %q", out)
	}
	if errs != "Processed a total of 3 messages\n" {
		t.Fatalf("stderr %q", errs)
	}
	// A null value prints null.
	_, out, _ = runPartition(t, Options{BootstrapServer: addr, Topic: "t", Partition: 0, Offset: "3", MaxMessages: 1, Properties: []string{"print.key=true"}})
	if out != "d\tnull\n" {
		t.Fatalf("tombstone: %q", out)
	}
}

// --timeout-ms: exit 0 after the idle time with what was read.
func TestTimeout(t *testing.T) {
	addr := setupCluster(t, 2, rec(0, "", "p0"), rec(1, "", "p1"))
	start := time.Now()
	code, out, errs := runTool(t, Options{BootstrapServer: addr, Topic: "t", FromBeginning: true, TimeoutMs: 1500})
	if code != 0 || errs != "Processed a total of 2 messages\n" {
		t.Fatalf("exit %d: %q", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(out, "p0\n") || !strings.Contains(out, "p1\n") {
		t.Fatalf("out %q", out)
	}
	if el := time.Since(start); el < 1500*time.Millisecond || el > 20*time.Second {
		t.Fatalf("returned after %v", el)
	}
	// Latest (no --from-beginning) on an idle topic: nothing, then timeout.
	code, out, errs = runTool(t, Options{BootstrapServer: addr, Topic: "t", TimeoutMs: 300})
	if code != 0 || out != "" || errs != "Processed a total of 0 messages\n" {
		t.Fatalf("latest: %d %q %q", code, out, errs)
	}
}

func TestPartitionOffset(t *testing.T) {
	addr := setupCluster(t, 2, rec(0, "", "a0"), rec(1, "", "b0"), rec(1, "", "b1"), rec(1, "", "b2"))
	_, out, _ := runTool(t, Options{BootstrapServer: addr, Topic: "t", Partition: 1, Offset: "1", MaxMessages: 2,
		Properties: []string{"print.offset=true", "print.partition=true"}})
	if out != "Partition:1\tOffset:1\tb1\nPartition:1\tOffset:2\tb2\n" {
		t.Fatalf("out %q", out)
	}
	_, out, _ = runTool(t, Options{BootstrapServer: addr, Topic: "t", Partition: 1, Offset: "earliest", MaxMessages: 1})
	if out != "b0\n" {
		t.Fatalf("earliest: %q", out)
	}
	_, out, _ = runPartition(t, Options{BootstrapServer: addr, Topic: "t", Partition: 0, FromBeginning: true, MaxMessages: 1})
	if out != "a0\n" {
		t.Fatalf("from-beginning with partition: %q", out)
	}
}

// With --group the consumer joins a group and commits what it printed: a
// second run continues after it.
func TestGroup(t *testing.T) {
	addr := setupCluster(t, 1, rec(0, "", "1"), rec(0, "", "2"), rec(0, "", "3"))
	_, out, errs := runTool(t, Options{BootstrapServer: addr, Topic: "t", Group: "g", FromBeginning: true, MaxMessages: 2})
	if out != "1\n2\n" {
		t.Fatalf("first run: %q %q", out, errs)
	}
	_, out, errs = runTool(t, Options{BootstrapServer: addr, Topic: "t", Group: "g", FromBeginning: true, MaxMessages: 1})
	if out != "3\n" {
		t.Fatalf("second run: %q %q", out, errs)
	}
}

func TestArgumentErrors(t *testing.T) {
	for _, c := range []struct {
		o    Options
		code int
		msg  string
	}{
		{Options{Topic: "t"}, 1, "bootstrap-server"},
		{Options{ZooKeeper: "localhost:2181/bad//chroot", Topic: "t"}, 1, "--zookeeper"},
		{Options{BootstrapServer: "h:1"}, 1, "--include/--topic"},
		{Options{BootstrapServer: "h:1", Topic: "t", Offset: "5"}, 1, "partition is required"},
		{Options{BootstrapServer: "h:1", Topic: "t", Partition: 1, Offset: "5", FromBeginning: true}, 1, "cannot be specified together"},
		{Options{BootstrapServer: "h:1", Topic: "t", Partition: 1, Offset: "-3"}, 1, "non-negative long"},
		{Options{BootstrapServer: "h:1", Topic: "t", Partition: 1, Group: "g"}, 1, "group and partition"},
		{Options{BootstrapServer: "h:1", Topic: "t", Formatter: "kafka.tools.ChecksumMessageFormatter"}, 1, "formatter"},
		{Options{BootstrapServer: "h:1", Topic: "t", ConsumerProps: []string{"auto.offset.reset=sometimes"}}, 1, "auto.offset.reset"},
	} {
		code, out, errs := runTool(t, c.o)
		if code != c.code || out != "" || !strings.Contains(errs, c.msg) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%+v: %d %q %q; want %d %q", c.o, code, out, errs, c.code, c.msg)
		}
	}
}
