package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"gregor/test/harness"
)

// The README's Speed command on a fresh broker: producer-perf-test (like
// the Java producer) lets its Metadata requests auto-create the topic, so
// it sends every record instead of waiting on UNKNOWN_TOPIC_OR_PARTITION
// until its delivery timeout; the console producer does the same.
func TestCLIProducersAutoCreateTopic(t *testing.T) {
	b := harness.StartBroker(t, nil)
	code, out, errs := cliRun(t, nil, "kafka-producer-perf-test.sh", "--topic", "perf", "--num-records", "3000", "--record-size", "100",
		"--throughput", "-1", "--producer-props", "bootstrap.servers="+b.Addr(), "acks=1", "linger.ms=5", "delivery.timeout.ms=20000", "request.timeout.ms=10000")
	if code != 0 || !strings.Contains(out, "3000 records sent, ") || strings.Contains(errs, "ERROR") {
		t.Fatalf("perf test on a fresh broker: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if got := len(consumeN(t, b, "perf", 3000, 60*time.Second)); got != 3000 {
		t.Fatalf("perf topic holds %d records", got)
	}

	code, out, errs = cliRunIn(t, nil, "a\nb\nc\n", "kafka-console-producer.sh", "--bootstrap-server", b.Addr(), "--topic", "fresh")
	if code != 0 {
		t.Fatalf("console producer on a missing topic: exit %d %q %q", code, out, errs)
	}
	if got := len(consumeN(t, b, "fresh", 3, 30*time.Second)); got != 3 {
		t.Fatalf("fresh topic holds %d records", got)
	}

	// Both topics were made with the broker's defaults (num.partitions=1).
	adm := kadm.NewClient(b.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	td, err := adm.ListTopics(ctx, "perf", "fresh")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"perf", "fresh"} {
		if d, ok := td[name]; !ok || d.Err != nil || len(d.Partitions) != 1 {
			t.Fatalf("topic %s after auto-create: %+v", name, td[name])
		}
	}
}
