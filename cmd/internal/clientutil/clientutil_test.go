package clientutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestParseBootstrap(t *testing.T) {
	got, err := ParseBootstrap("--bootstrap-server", " 127.0.0.1:9092, [::1]:9093 ,")
	if err != nil || strings.Join(got, "|") != "127.0.0.1:9092|[::1]:9093" {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", "localhost", "h:0", "h:x", "h:70000"} {
		if _, err := ParseBootstrap("--broker-list", bad); err == nil || !strings.Contains(err.Error(), "--broker-list") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestParseProps(t *testing.T) {
	m, err := ParseProps("--property", []string{"print.key=true", " key.separator= :: ", "a=b=c", "print.key=false"})
	if err != nil || m["print.key"] != "false" || m["key.separator"] != " :: " || m["a"] != "b=c" {
		t.Fatalf("%v %v", m, err)
	}
	m, err = ParseConfigs("--config", []string{"cleanup.policy = compact", "retention.ms=1000"})
	if err != nil || m["cleanup.policy"] != "compact" || m["retention.ms"] != "1000" {
		t.Fatalf("%v %v", m, err)
	}
	if _, err := ParseProps("--config", []string{"novalue"}); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Fatalf("missing '=': %v", err)
	}
	p := filepath.Join(t.TempDir(), "c.properties")
	os.WriteFile(p, []byte("acks = all\nclient.id=${x}\n"), 0o644)
	f, err := LoadPropsFile(p)
	if err != nil || f["acks"] != "all" || f["client.id"] != "${x}" {
		t.Fatalf("%v %v", f, err)
	}
	if m := Merge(map[string]string{"a": "1", "b": "1"}, nil, map[string]string{"b": "2"}); m["a"] != "1" || m["b"] != "2" {
		t.Fatalf("merge %v", m)
	}
}

func TestProducerOptions(t *testing.T) {
	o, err := ProducerOptions(map[string]string{"acks": "all", "linger.ms": "5", "batch.size": "0", "compression.type": "zstd",
		"client.id": "x", "retries": "2", "key.serializer": "org.apache.kafka.common.serialization.StringSerializer", "bogus": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Ignored, ",") != "bogus,key.serializer" {
		t.Errorf("ignored %v", o.Ignored)
	}
	cl, err := kgo.NewClient(append(o.Opts, kgo.SeedBrokers("127.0.0.1:1"))...)
	if err != nil {
		t.Fatalf("options rejected by kgo: %v", err)
	}
	if got := fmt.Sprint(cl.OptValue(kgo.ProducerBatchCompression)); got != fmt.Sprint([]kgo.CompressionCodec{kgo.ZstdCompression()}) {
		t.Errorf("compression.type=zstd gave %s", got)
	}
	cl.Close()
	// acks=1 turns idempotence off (kgo refuses acks=1 with idempotence on).
	o, err = ProducerOptions(map[string]string{"acks": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if cl, err := kgo.NewClient(append(o.Opts, kgo.SeedBrokers("127.0.0.1:1"))...); err != nil {
		t.Fatalf("acks=1: %v", err)
	} else {
		// compression.type defaults to none, as Kafka's (not kgo's snappy).
		if got := fmt.Sprint(cl.OptValue(kgo.ProducerBatchCompression)); got != fmt.Sprint([]kgo.CompressionCodec{kgo.NoCompression()}) {
			t.Errorf("default compression %s, want none", got)
		}
		cl.Close()
	}
	for _, bad := range []map[string]string{{"acks": "2"}, {"linger.ms": "x"}, {"compression.type": "brotli"},
		{"acks": "0", "enable.idempotence": "true"}, {"security.protocol": "SSH"}, {"retries": "-1"}} {
		if _, err := ProducerOptions(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// transactional.id is handed back for the caller to apply (the perf tool
// lets --transactional-id override it), transaction.timeout.ms becomes
// kgo's TransactionTimeout, and a transactional producer must be
// idempotent, as Kafka's ProducerConfig insists.
func TestProducerOptionsTransactional(t *testing.T) {
	o, err := ProducerOptions(map[string]string{"transactional.id": "tx-1", "transaction.timeout.ms": "15000"})
	if err != nil || o.TransactionalID != "tx-1" || len(o.Ignored) != 0 {
		t.Fatalf("%+v %v", o, err)
	}
	cl, err := kgo.NewClient(append(o.Opts, kgo.SeedBrokers("127.0.0.1:1"), kgo.TransactionalID(o.TransactionalID))...)
	if err != nil {
		t.Fatalf("options rejected by kgo: %v", err)
	}
	defer cl.Close()
	if got := fmt.Sprint(cl.OptValue(kgo.TransactionTimeout)); got != "15s" {
		t.Errorf("transaction timeout %s, want 15s", got)
	}
	for _, bad := range []map[string]string{{"transactional.id": "x", "acks": "1"},
		{"transactional.id": "x", "enable.idempotence": "false"}, {"transaction.timeout.ms": "0"}} {
		if _, err := ProducerOptions(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestConsumerOptions(t *testing.T) {
	o, err := ConsumerOptions(map[string]string{"group.id": "g", "auto.offset.reset": "earliest", "fetch.max.wait.ms": "100",
		"isolation.level": "read_committed", "enable.auto.commit": "false", "partition.assignment.strategy": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
		"session.timeout.ms": "10000", "value.deserializer": "x"})
	if err != nil || o.Group != "g" || strings.Join(o.Ignored, ",") != "value.deserializer" {
		t.Fatalf("%+v %v", o, err)
	}
	cl, err := kgo.NewClient(append(o.Opts, kgo.SeedBrokers("127.0.0.1:1"), kgo.ConsumeTopics("t"), kgo.ConsumerGroup(o.Group))...)
	if err != nil {
		t.Fatalf("options rejected by kgo: %v", err)
	}
	cl.Close()
	for _, bad := range []map[string]string{{"auto.offset.reset": "x"}, {"isolation.level": "dirty"}, {"partition.assignment.strategy": "magic"}} {
		if _, err := ConsumerOptions(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestReport(t *testing.T) {
	var b bytes.Buffer
	if Report(&b, "E ", nil) != 0 || b.Len() != 0 {
		t.Fatal("nil error")
	}
	if code := Report(&b, "E ", errors.New("two\nlines")); code != 1 || b.String() != "E two lines\n" {
		t.Fatalf("%d %q", code, b.String())
	}
	b.Reset()
	if code := Report(&b, "", ZooKeeperUnsupported("kafka-topics")); code != 2 || !strings.Contains(b.String(), "--zookeeper") {
		t.Fatalf("%d %q", code, b.String())
	}
}

func TestAdminClient(t *testing.T) {
	adm, err := AdminClient("127.0.0.1:1", map[string]string{"client.id": "tool"})
	if err != nil || adm == nil {
		t.Fatalf("%v %v", adm, err)
	}
	adm.Close()
	_, err = AdminClient("localhost", nil)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(err.Error(), "--bootstrap-server") {
		t.Errorf("bad bootstrap: %v, want a usage error naming --bootstrap-server", err)
	}
	if _, err := AdminClient("127.0.0.1:1", map[string]string{"isolation.level": "dirty"}); err == nil || !strings.Contains(err.Error(), "isolation.level") {
		t.Errorf("bad property: %v, want an error naming isolation.level", err)
	}
}

func TestFetchError(t *testing.T) {
	boom := errors.New("boom")
	part := func(p int32, err error) kgo.FetchPartition { return kgo.FetchPartition{Partition: p, Err: err} }
	fs := kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: "t", Partitions: []kgo.FetchPartition{
		part(0, nil), part(1, context.DeadlineExceeded), part(2, boom), part(3, errors.New("later")),
	}}}}}
	err := FetchError(fs)
	if !errors.Is(err, boom) || err.Error() != "consuming t partition 2: boom" {
		t.Fatalf("got %v, want the first non-context error of partition 2", err)
	}
	quiet := kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: "t", Partitions: []kgo.FetchPartition{
		part(0, context.Canceled), part(1, fmt.Errorf("poll: %w", context.DeadlineExceeded)),
	}}}}}
	if err := FetchError(quiet); err != nil {
		t.Fatalf("context errors only: got %v, want nil", err)
	}
}
