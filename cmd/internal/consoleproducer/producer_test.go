package consoleproducer

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil/clienttest"
)

func TestLineReader(t *testing.T) {
	r, unknown, err := NewLineReader(map[string]string{"parse.key": "true", "key.separator": ":", "null.marker": "NULL", "colour": "x"})
	if err != nil || len(unknown) != 1 || unknown[0] != "colour" {
		t.Fatalf("%v %v", unknown, err)
	}
	rec, err := r.Parse("t", "k1:v:1")
	if err != nil || string(rec.Key) != "k1" || string(rec.Value) != "v:1" || rec.Topic != "t" {
		t.Fatalf("%+v %v", rec, err)
	}
	rec, _ = r.Parse("t", "NULL:gone")
	if rec.Key != nil || string(rec.Value) != "gone" {
		t.Fatalf("null key: %+v", rec)
	}
	rec, _ = r.Parse("t", "k:NULL")
	if rec.Value != nil || string(rec.Key) != "k" {
		t.Fatalf("tombstone: %+v", rec)
	}
	if _, err = r.Parse("t", "no separator"); err == nil || err.Error() != "No key separator found on line number 4: 'no separator'" {
		t.Fatalf("missing separator: %v", err)
	}

	r, _, _ = NewLineReader(map[string]string{"parse.key": "true", "ignore.error": "true"})
	rec, _ = r.Parse("t", "whole line")
	if rec.Key != nil || string(rec.Value) != "whole line" {
		t.Fatalf("ignore.error: %+v", rec)
	}

	r, _, _ = NewLineReader(map[string]string{"parse.headers": "true", "parse.key": "true"})
	rec, err = r.Parse("t", "h1:a,h2\tk\tv")
	if err != nil || len(rec.Headers) != 2 || rec.Headers[0].Key != "h1" || string(rec.Headers[0].Value) != "a" ||
		rec.Headers[1].Key != "h2" || rec.Headers[1].Value != nil || string(rec.Key) != "k" || string(rec.Value) != "v" {
		t.Fatalf("headers: %+v %v", rec, err)
	}

	r, _, _ = NewLineReader(nil)
	rec, _ = r.Parse("t", "")
	if rec.Value == nil || len(rec.Value) != 0 || rec.Key != nil {
		t.Fatalf("empty line must be an empty (not null) value: %+v", rec)
	}
	if _, _, err := NewLineReader(map[string]string{"key.separator": ""}); err == nil {
		t.Fatal("empty key.separator accepted")
	}
}

func TestProduceLines(t *testing.T) {
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "lines"))
	var errb bytes.Buffer
	in := "a:1\nb:2\r\nc:\nlast:no newline"
	code := Main(context.Background(), Options{BootstrapServer: addr, Topic: "lines",
		Properties:    []string{"parse.key=true", "key.separator=:"},
		ProducerProps: []string{"linger.ms=5", "client.id=console-test"},
		FlagProps:     map[string]string{"compression.type": "gzip"}}, strings.NewReader(in), &errb)
	if code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	recs := clienttest.Consume(t, addr, "lines", 4)
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Key)+"="+string(r.Value))
	}
	if strings.Join(got, "|") != "a=1|b=2|c=|last=no newline" {
		t.Fatalf("records %q", got)
	}
}

func TestProduceSyncAcksOne(t *testing.T) {
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "lines"))
	var errb bytes.Buffer
	code := Main(context.Background(), Options{BootstrapServer: addr, Topic: "lines", Sync: true,
		FlagProps: map[string]string{"acks": "1"}}, strings.NewReader("x\ny\n"), &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if recs := clienttest.Consume(t, addr, "lines", 2); string(recs[0].Value) != "x" || string(recs[1].Value) != "y" {
		t.Fatalf("records %v", recs)
	}
}

func TestProduceErrors(t *testing.T) {
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "lines"))
	var errb bytes.Buffer
	// A line without the key separator: one error line, exit 1.
	code := Main(context.Background(), Options{BootstrapServer: addr, Topic: "lines", Properties: []string{"parse.key=true"}},
		strings.NewReader("k\tv\nnokey\n"), &errb)
	if code != 1 || errb.String() != "ERROR No key separator found on line number 2: 'nokey'\n" {
		t.Fatalf("exit %d: %q", code, errb.String())
	}

	// A record larger than the topic's max.message.bytes: the broker's error, exit 1.
	cl, _ := kgo.NewClient(kgo.SeedBrokers(addr))
	defer cl.Close()
	big := "100"
	if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, map[string]*string{"max.message.bytes": &big}, "small"); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	code = Main(context.Background(), Options{BootstrapServer: addr, Topic: "small", FlagProps: map[string]string{"retries": "0"}},
		strings.NewReader(strings.Repeat("x", 500)+"\n"), &errb)
	if code != 1 || !strings.Contains(errb.String(), "Error when sending message to topic small with key: null, value: 500 bytes with error:") ||
		strings.Count(errb.String(), "\n") != 1 {
		t.Fatalf("exit %d: %q", code, errb.String())
	}

	for _, o := range []Options{{Topic: "x"}, {BootstrapServer: addr}, {BootstrapServer: addr, Topic: "t", ProducerProps: []string{"acks=2"}},
		{BootstrapServer: addr, Topic: "t", ProducerProps: []string{"acks=1", "enable.idempotence=true"}}} {
		errb.Reset()
		if code := Main(context.Background(), o, strings.NewReader(""), &errb); code != 1 || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%+v: exit %d %q", o, code, errb.String())
		}
	}
	errb.Reset()
	if code := Main(context.Background(), Options{ZooKeeper: "localhost:2181", Topic: "t"}, strings.NewReader(""), &errb); code != 2 ||
		!strings.Contains(errb.String(), "--zookeeper") {
		t.Errorf("zookeeper: exit %d %q", code, errb.String())
	}
}

// A line larger than batch.size (16384 by default) is one record as in
// Kafka: batch.size is a batching target, max.request.size (1 MiB by
// default) the limit; a record above max.request.size fails with Kafka's
// RecordTooLargeException wording.
func TestLargeLinesAndMaxRequestSize(t *testing.T) {
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "lines"))
	var errb bytes.Buffer
	line := strings.Repeat("y", 100_000)
	code := Main(context.Background(), Options{BootstrapServer: addr, Topic: "lines",
		FlagProps: map[string]string{"batch.size": "16384", "linger.ms": "5"}}, strings.NewReader(line+"\nsmall\n"), &errb)
	if code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	recs := clienttest.Consume(t, addr, "lines", 2)
	if len(recs[0].Value) != len(line) || string(recs[1].Value) != "small" {
		t.Fatalf("records %d bytes, %q", len(recs[0].Value), recs[1].Value)
	}

	errb.Reset()
	code = Main(context.Background(), Options{BootstrapServer: addr, Topic: "lines",
		ProducerProps: []string{"max.request.size=50000"}}, strings.NewReader(line+"\n"), &errb)
	want := "ERROR Error when sending message to topic lines with key: null, value: 100000 bytes with error: The message is 100082 bytes when serialized which is larger than 50000, which is the value of the max.request.size configuration.\n"
	if code != 1 || errb.String() != want {
		t.Fatalf("exit %d: %q", code, errb.String())
	}
	for _, bad := range []string{"max.request.size=abc", "max.request.size=10", "batch.size=-1"} {
		errb.Reset()
		if code := Main(context.Background(), Options{BootstrapServer: addr, Topic: "lines", ProducerProps: []string{bad}},
			strings.NewReader("x\n"), &errb); code != 1 || !strings.Contains(errb.String(), strings.Split(bad, "=")[0]) {
			t.Errorf("%s: exit %d %q", bad, code, errb.String())
		}
	}
}

func TestDefaultClientID(t *testing.T) {
	props, err := producerProps(Options{})
	if err != nil || props["client.id"] != "console-producer" || props["max.request.size"] != "1048576" {
		t.Fatalf("%v %v", props, err)
	}
	props, _ = producerProps(Options{ProducerProps: []string{"client.id=mine"}})
	if props["client.id"] != "mine" {
		t.Fatalf("client.id override lost: %v", props)
	}
}

// `--compression-codec brotli` (space form) takes brotli as the value, as
// Kafka's option parser does, and fails like --compression-codec=brotli.
func TestBareCodecValue(t *testing.T) {
	cases := []struct {
		raw, left []string
		codec     string
		ok        bool
	}{
		{[]string{"--topic", "t", "--compression-codec", "brotli"}, []string{"brotli"}, "brotli", true},
		{[]string{"--compression-codec", "snappy", "--topic", "t"}, []string{"snappy"}, "snappy", true},
		{[]string{"--compression-codec", "--topic", "t"}, nil, "", false},
		{[]string{"--compression-codec=gzip", "extra"}, []string{"extra"}, "", false},
		{[]string{"--topic", "t", "stray"}, []string{"stray"}, "", false},
	}
	for _, c := range cases {
		codec, rest, ok := BareCodecValue(c.raw, c.left)
		if codec != c.codec || ok != c.ok || (ok && len(rest) != 0) || (!ok && len(rest) != len(c.left)) {
			t.Errorf("%q: %q %q %v", c.raw, codec, rest, ok)
		}
	}
	var space, eq bytes.Buffer
	Main(context.Background(), Options{BootstrapServer: "127.0.0.1:1", Topic: "t", FlagProps: map[string]string{"compression.type": "brotli"}}, strings.NewReader(""), &space)
	Main(context.Background(), Options{BootstrapServer: "127.0.0.1:1", Topic: "t", FlagProps: map[string]string{"compression.type": "brotli"}}, strings.NewReader(""), &eq)
	if !strings.Contains(space.String(), `invalid compression codec "brotli"`) || space.String() != eq.String() {
		t.Fatalf("%q vs %q", space.String(), eq.String())
	}
}
