// Package clienttest is the tools' test plumbing: an in-process kfake
// cluster, producing its input and reading back what a tool wrote. Only
// tests import it.
package clienttest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Timeout bounds Produce and Consume.
const Timeout = 10 * time.Second

// Cluster starts a kfake cluster with opts (kfake.NumBrokers,
// kfake.SeedTopics…), closed when t ends, and returns it with its first
// listener address.
func Cluster(t testing.TB, opts ...kfake.Opt) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()[0]
}

// Produce writes recs to the cluster at addr synchronously, each to its
// own Topic and Partition (manual partitioner), failing t on any error or
// after Timeout.
func Produce(t testing.TB, addr string, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// Consume reads topic from the start until it has at least n records and
// returns them in fetch order; fewer within Timeout fails t.
func Consume(t testing.TB, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n && ctx.Err() == nil {
		out = append(out, cl.PollFetches(ctx).Records()...)
	}
	if len(out) < n {
		t.Fatalf("consuming %s: got %d of %d records", topic, len(out), n)
	}
	return out
}
