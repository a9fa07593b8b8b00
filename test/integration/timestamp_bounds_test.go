package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// produceAt produces one record with timestamp ts and returns the error.
func produceAt(t *testing.T, b *harness.Broker, topic string, ts time.Time) error {
	t.Helper()
	cl := b.Client(kgo.DefaultProduceTopic(topic), kgo.RecordRetries(0), kgo.RequestRetries(0))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v"), Timestamp: ts}).FirstErr()
}

// KIP-937: a topic's message.timestamp.before.max.ms refuses a timestamp
// an hour old with INVALID_TIMESTAMP and leaves the future unbounded; the
// broker's deprecated log.message.timestamp.difference.max.ms still bounds
// both sides (Kafka 3.6+ takes it where before/after are left at their
// default), and log.message.timestamp.after.max.ms overrides it forward.
func TestTimestampBeforeAfter(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"log.message.timestamp.difference.max.ms": "60000"})
	before := "60000"
	createTopic(t, b, "ts-before", 1, map[string]*string{"message.timestamp.before.max.ms": &before})
	createTopic(t, b, "ts-diff", 1, nil)
	now := time.Now()
	for _, tc := range []struct {
		topic   string
		ts      time.Time
		invalid bool
	}{
		{"ts-before", now.Add(-time.Hour), true},
		{"ts-before", now.Add(time.Hour), true}, // the after side keeps the broker's difference (60 s)
		{"ts-before", now.Add(-30 * time.Second), false},
		{"ts-diff", now.Add(-time.Hour), true},
		{"ts-diff", now.Add(time.Hour), true},
		{"ts-diff", now, false},
	} {
		err := produceAt(t, b, tc.topic, tc.ts)
		if got := errors.Is(err, kerr.InvalidTimestamp); got != tc.invalid || (!tc.invalid && err != nil) {
			t.Errorf("%s at now%+v: %v, want INVALID_TIMESTAMP %v", tc.topic, tc.ts.Sub(now).Round(time.Second), err, tc.invalid)
		}
	}
	after := "7200000"
	createTopic(t, b, "ts-after", 1, map[string]*string{"message.timestamp.after.max.ms": &after})
	if err := produceAt(t, b, "ts-after", now.Add(time.Hour)); err != nil {
		t.Errorf("ts-after (after.max.ms 2 h) an hour ahead: %v", err)
	}
	if err := produceAt(t, b, "ts-after", now.Add(-time.Hour)); !errors.Is(err, kerr.InvalidTimestamp) {
		t.Errorf("ts-after an hour old: %v, want INVALID_TIMESTAMP (the difference bounds the past)", err)
	}
}
