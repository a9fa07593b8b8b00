package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// TestDynamicCleanerBackoff: with log.cleaner.backoff.ms at an hour the
// cleaner does not run; a dynamic default of 200 ms (kafka-configs
// --entity-default) makes it compact the topic without a restart.
func TestDynamicCleanerBackoff(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"log.cleaner.backoff.ms": "3600000"})
	const topic = "dyn-compacted"
	const keys, rounds = 5, 20
	fillCompactedTopic(t, b, topic, keys, rounds)
	if _, n := readCompacted(t, b, topic); n != keys*rounds+20 {
		t.Fatalf("before the change: %d records, want all %d (the cleaner must not have run)", n, keys*rounds+20)
	}
	if out, err := gregorConfigs(t, "--bootstrap-server", b.Addr(), "--entity-type", "brokers", "--entity-default", "--alter", "--add-config", "log.cleaner.backoff.ms=200"); err != nil {
		t.Fatalf("alter: %v %s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, n := readCompacted(t, b, topic)
		if n < keys*rounds && len(m["k0"]) <= 2 {
			return // compacted: at most the last k0 (and one in the active segment)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not compacted 30 s after the dynamic backoff: %d records", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDynamicCleanerIORate: at log.cleaner.io.max.bytes.per.second=100 a
// pass over the 1 KiB segments takes minutes; raising it at run time
// (kafka-configs --entity-default) lets the running pass finish and the
// topic compacts without a restart. log.cleaner.threads follows Kafka's
// half-to-double rule with its message.
func TestDynamicCleanerIORate(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"log.cleaner.backoff.ms": "200", "log.cleaner.io.max.bytes.per.second": "100"})
	const topic = "dyn-io-rate"
	const keys, rounds = 5, 20
	fillCompactedTopic(t, b, topic, keys, rounds)
	if _, n := readCompacted(t, b, topic); n != keys*rounds+20 {
		t.Fatalf("before the change: %d records, want all %d (the throttled cleaner cannot have finished)", n, keys*rounds+20)
	}
	out, err := gregorConfigs(t, "--bootstrap-server", b.Addr(), "--entity-type", "brokers", "--entity-default", "--alter", "--add-config", "log.cleaner.threads=3")
	if err == nil || !strings.Contains(out, "Log cleaner threads cannot be increased to more than double the current value 1") {
		t.Fatalf("log.cleaner.threads=3 from 1: %v %s", err, out)
	}
	if out, err := gregorConfigs(t, "--bootstrap-server", b.Addr(), "--entity-type", "brokers", "--entity-default", "--alter",
		"--add-config", "log.cleaner.threads=2,log.cleaner.io.max.bytes.per.second=100000000"); err != nil {
		t.Fatalf("alter: %v %s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, n := readCompacted(t, b, topic)
		if n < keys*rounds && len(m["k0"]) <= 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not compacted 30 s after the dynamic rate: %d records", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// fillCompactedTopic creates topic compacted with 1 KiB segments and
// produces rounds × keys keyed records, then 20 fillers with distinct keys
// that roll the last round out of the active segment: a cleaner pass has
// every round but the last to remove.
func fillCompactedTopic(t *testing.T, b *harness.Broker, topic string, keys, rounds int) {
	t.Helper()
	createTopic(t, b, topic, 1, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("1024"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
	})
	cl := b.Client(kgo.DefaultProduceTopic(topic))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for r := 0; r < rounds; r++ {
		for k := 0; k < keys; k++ {
			rec := &kgo.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte(fmt.Sprintf("k%d@%d-padding-padding", k, r))}
			if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for j := 0; j < 20; j++ { // distinct keys roll the last round out of the active segment
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("fill-%d", j)), Value: []byte("filler-padding-padding-padding")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}
