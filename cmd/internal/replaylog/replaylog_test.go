package replaylog

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil/clienttest"
)

func cluster(t *testing.T) string {
	t.Helper()
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(3, "in"), kfake.SeedTopics(1, "out"), kfake.AllowAutoTopicCreation())
	var recs []*kgo.Record
	for i := 0; i < 30; i++ {
		recs = append(recs, &kgo.Record{Topic: "in", Partition: int32(i % 3), Key: []byte(fmt.Sprintf("k%02d", i)), Value: []byte(fmt.Sprintf("v%d", i)),
			Timestamp: time.UnixMilli(1_600_000_000_000 + int64(i)), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte{byte(i)}}}})
	}
	clienttest.Produce(t, addr, recs...)
	return addr
}

// consume reads n records of topic from the start, sorted by key.
func consume(t *testing.T, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	out := clienttest.Consume(t, addr, topic, n)
	sort.Slice(out, func(i, j int) bool { return string(out[i].Key) < string(out[j].Key) })
	return out
}

func TestReplay(t *testing.T) {
	addr := cluster(t)
	var errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := Run(ctx, Options{BrokerList: addr, InputTopic: "in", OutputTopic: "out", Messages: -1, Threads: 2}, &errb)
	if err != nil || n != 30 || errb.Len() != 0 {
		t.Fatalf("%d %v %q", n, err, errb.String())
	}
	got := consume(t, addr, "out", 30)
	if len(got) != 30 {
		t.Fatalf("%d records", len(got))
	}
	for i, r := range got {
		if string(r.Key) != fmt.Sprintf("k%02d", i) || string(r.Value) != fmt.Sprintf("v%d", i) ||
			r.Timestamp.UnixMilli() != 1_600_000_000_000+int64(i) || len(r.Headers) != 1 || r.Headers[0].Key != "h" || r.Headers[0].Value[0] != byte(i) {
			t.Fatalf("record %d: %+v", i, r)
		}
	}

	// --messages bounds the replay.
	n, err = Run(ctx, Options{BrokerList: addr, InputTopic: "in", OutputTopic: "out2", Messages: 5, Threads: 1, Sync: true}, &errb)
	if err != nil || n != 5 {
		t.Fatalf("--messages 5: %d %v", n, err)
	}
	if got := consume(t, addr, "out2", 5); len(got) != 5 {
		t.Fatalf("out2 has %d", len(got))
	}
}

func TestArguments(t *testing.T) {
	for _, c := range []struct {
		o   Options
		msg string
	}{
		{Options{BrokerList: "h:1", OutputTopic: "o", Threads: 1}, "inputtopic"},
		{Options{BrokerList: "h:1", InputTopic: "i", Threads: 1}, "outputtopic"},
		{Options{InputTopic: "i", OutputTopic: "o", Threads: 1}, "broker-list"},
		{Options{BrokerList: "h", InputTopic: "i", OutputTopic: "o", Threads: 1}, "host:port"},
		{Options{BrokerList: "h:1", InputTopic: "i", OutputTopic: "o"}, "--threads"},
		{Options{ZooKeeper: "localhost:2181/bad//chroot", InputTopic: "i", OutputTopic: "o", Threads: 1}, "--zookeeper"},
	} {
		var errb bytes.Buffer
		if code := Main(context.Background(), c.o, &errb); code != 1 || !strings.Contains(errb.String(), c.msg) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%+v: %d %q", c.o, code, errb.String())
		}
	}
}
