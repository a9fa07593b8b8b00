package perftest

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil/clienttest"
)

func fakeCluster(t *testing.T) string {
	t.Helper()
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(3, "perf"))
	return addr
}

func TestProducerThenConsumerAgainstKfake(t *testing.T) {
	addr := fakeCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := RunProducer(ctx, ProducerOptions{Topic: "perf", NumRecords: 2000, RecordSize: 100, Throughput: -1,
		ProducerProps:  []string{"bootstrap.servers=" + addr, "acks=1", "linger.ms=1", "compression.type=lz4"},
		ReportInterval: time.Millisecond, PrintLatencyMicros: true}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	final := regexp.MustCompile(`^2000 records sent, [0-9.]+ records/sec \([0-9.]+ MB/sec\), [0-9.]+ ms avg latency, [0-9.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99.9th\.$`)
	if len(lines) < 2 || !final.MatchString(lines[len(lines)-2]) {
		t.Fatalf("final line missing:\n%s", out.String())
	}
	if !strings.HasPrefix(lines[len(lines)-1], "latency percentiles: ") {
		t.Fatalf("µs line missing:\n%s", out.String())
	}
	progress := regexp.MustCompile(`^\d+ records sent, [0-9.]+ records/sec \([0-9.]+ MB/sec\), [0-9.]+ ms avg latency, [0-9.]+ ms max latency\.$`)
	if !progress.MatchString(lines[0]) {
		t.Fatalf("progress line %q", lines[0])
	}

	out.Reset()
	code = RunConsumer(ctx, ConsumerOptions{BootstrapServer: addr, Topic: "perf", Messages: 2000, Timeout: 10 * time.Second}, &out, &errOut)
	if code != 0 {
		t.Fatalf("consumer exit %d: %s", code, errOut.String())
	}
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || lines[0] != "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec" {
		t.Fatalf("consumer output:\n%s", out.String())
	}
	f := strings.Split(lines[1], ", ")
	// 2000 records × 100 bytes = 0.1907 MB.
	if len(f) != 10 || f[2] != "0.1907" || f[4] != "2000" || f[6] != "0" {
		t.Fatalf("consumer row %q", lines[1])
	}
}

func TestConsumerTimesOutOnShortTopic(t *testing.T) {
	addr := fakeCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := Produce(ctx, ProducerOptions{Topic: "perf", NumRecords: 10, RecordSize: 10, Throughput: -1,
		ProducerProps: []string{"bootstrap.servers=" + addr}}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	res, err := Consume(ctx, ConsumerOptions{BootstrapServer: addr, Topic: "perf", Messages: 11, Timeout: 300 * time.Millisecond}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil || !res.TimedOut || res.Messages != 10 || res.Bytes != 100 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestProducerUsage(t *testing.T) {
	ctx := context.Background()
	for _, o := range []ProducerOptions{
		{NumRecords: 1, RecordSize: 1},
		{Topic: "t", RecordSize: 1, ProducerProps: []string{"bootstrap.servers=127.0.0.1:1"}},
		{Topic: "t", NumRecords: 1, ProducerProps: []string{"bootstrap.servers=127.0.0.1:1"}},
		{Topic: "t", NumRecords: 1, RecordSize: 1},
		{Topic: "t", NumRecords: 1, RecordSize: 1, ProducerProps: []string{"bootstrap.servers=127.0.0.1:1", "acks=2"}},
	} {
		var errOut bytes.Buffer
		if code := RunProducer(ctx, o, &bytes.Buffer{}, &errOut); code != 1 || !strings.HasPrefix(errOut.String(), "ERROR ") {
			t.Errorf("%+v: exit %d %q", o, code, errOut.String())
		}
	}
}

func TestPercentileAndThrottle(t *testing.T) {
	s := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if percentile(s, 0.5) != 6 || percentile(s, 0.99) != 10 || percentile(nil, 0.5) != 0 {
		t.Fatal("percentile")
	}
	// 1000 records/s: record 50 is due 50 ms after start.
	th := throttler{rate: 1000, start: time.Now()}
	th.wait(context.Background(), 50)
	if el := time.Since(th.start); el < 50*time.Millisecond {
		t.Fatalf("throttle returned after %v", el)
	}
}

// Kafka's yyyy-MM-dd HH:mm:ss:SSS: the milliseconds are printed (a Go
// layout "…05:000" printed a literal ":000").
func TestFormatDate(t *testing.T) {
	tm := time.Date(2024, 1, 2, 3, 4, 5, 78_900_000, time.UTC)
	if got := formatDate(tm); got != "2024-01-02 03:04:05:078" {
		t.Fatalf("formatDate = %q", got)
	}
}

// With --transaction-duration-ms the producer commits a transaction every
// few ms, as Kafka's ProducerPerformance does: every record is committed
// (a read_committed consumer sees them all), more than one transaction
// ran, and the commit-latency line follows the µs line.
func TestTransactionalProducerAgainstKfake(t *testing.T) {
	addr := fakeCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	o := ProducerOptions{Topic: "perf", NumRecords: 3000, RecordSize: 100, Throughput: 30000,
		ProducerProps:  []string{"bootstrap.servers=" + addr, "linger.ms=1"},
		ReportInterval: time.Minute, PrintLatencyMicros: true,
		TransactionDuration: 10 * time.Millisecond, TransactionDurationSet: true}
	sum, err := Produce(ctx, o, &out, &errOut)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	if sum.Records != 3000 || sum.Transactions < 2 || sum.CommitP50 <= 0 || sum.CommitMax < sum.CommitP99 || sum.EndTxnP50 <= 0 || sum.EndTxnP50 > sum.CommitP50 {
		t.Fatalf("summary %+v", sum)
	}
	sum.printMicros(&out)
	if !regexp.MustCompile(`(?m)^\d+ transactions committed, commit latency: \d+ us 50th, \d+ us 99th, \d+ us max; EndTxn alone: \d+ us 50th, \d+ us 99th\.$`).MatchString(out.String()) {
		t.Fatalf("no commit latency line:\n%s", out.String())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("perf"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := 0
	for got < 3000 && ctx.Err() == nil {
		got += cl.PollFetches(ctx).NumRecords()
	}
	if got != 3000 {
		t.Fatalf("read_committed consumer got %d records, want 3000", got)
	}
}

// Kafka's checks: a given --transaction-duration-ms must be positive, and
// a transactional producer must be idempotent (acks=all).
func TestTransactionalProducerUsage(t *testing.T) {
	for _, o := range []ProducerOptions{
		{Topic: "t", NumRecords: 1, RecordSize: 1, ProducerProps: []string{"bootstrap.servers=127.0.0.1:1"}, TransactionDurationSet: true},
		{Topic: "t", NumRecords: 1, RecordSize: 1, ProducerProps: []string{"bootstrap.servers=127.0.0.1:1", "acks=1", "transactional.id=x"}},
		{Topic: "t", NumRecords: 1, RecordSize: 1, ProducerProps: []string{"bootstrap.servers=127.0.0.1:1", "enable.idempotence=false", "transactional.id=x"}},
		{Topic: "t", NumRecords: 1, RecordSize: 1, ProducerProps: []string{"bootstrap.servers=127.0.0.1:1", "transaction.timeout.ms=0"}},
	} {
		var errOut bytes.Buffer
		if code := RunProducer(context.Background(), o, &bytes.Buffer{}, &errOut); code != 1 || !strings.HasPrefix(errOut.String(), "ERROR ") {
			t.Errorf("%+v: exit %d %q", o, code, errOut.String())
		}
	}
}
