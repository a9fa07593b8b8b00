// Package integration runs the real gregor binary on loopback and drives it
// with real clients: franz-go here, kcat and kafka-python through their
// command lines, and raw sockets for malformed input.
package integration

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// createTopic creates a topic through the Kafka admin API and fails the test on error.
func createTopic(t *testing.T, b *harness.Broker, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	adm := kadm.NewClient(b.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopics(ctx, partitions, 1, configs, topic)
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	for _, r := range resp {
		if r.Err != nil {
			t.Fatalf("create topic %s: %v", topic, r.Err)
		}
	}
}

// consumeN reads exactly n records of topic from the start of every partition
// (no consumer group), failing after timeout.
func consumeN(t *testing.T, b *harness.Broker, topic string, n int, timeout time.Duration) []*kgo.Record {
	t.Helper()
	cl := b.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before timeout", len(out), n)
		}
		fs.EachError(func(t2 string, p int32, err error) {
			t.Logf("fetch error %s/%d: %v", t2, p, err)
		})
		out = append(out, fs.Records()...)
	}
	if len(out) != n {
		t.Fatalf("consumed %d records, want %d", len(out), n)
	}
	return out
}

// pollRecords polls cl until it has read n records (counting re-reads),
// failing when ctx ends first; who names the consumer in the message.
func pollRecords(ctx context.Context, t *testing.T, cl *kgo.Client, n int, who string) {
	t.Helper()
	for read := 0; read < n; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s read %d of %d records", who, read, n)
		}
		read += fs.NumRecords()
	}
}

// stableMembers describes group and, when it is Stable, returns how many
// partitions each member owns, keyed by key(member) (its MemberID,
// ClientID…); nil when the group is not Stable or was not described
// within 5 s (and ctx).
func stableMembers(ctx context.Context, adm *kadm.Client, group string, key func(kadm.DescribedGroupMember) string) map[string]int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	gs, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return nil
	}
	g := gs[group]
	if g.Err != nil || g.State != "Stable" {
		return nil
	}
	out := map[string]int{}
	for _, m := range g.Members {
		n := 0
		if ca, ok := m.Assigned.AsConsumer(); ok {
			for _, tp := range ca.Topics {
				n += len(tp.Partitions)
			}
		}
		out[key(m)] = n
	}
	return out
}
