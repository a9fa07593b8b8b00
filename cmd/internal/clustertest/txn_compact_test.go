package clustertest_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clustertest"
	"gregor/storage/record"
	"gregor/test/harness"
)

// keyedTxn writes keyed batches to a compacted partition: transactional
// ones with per-producer sequences, or plain ones (pid -1).
type keyedTxn struct {
	*txnEnv
	seq map[int64]int32
}

func (k *keyedTxn) produce(id int32, pid int64, kvs ...string) {
	k.t.Helper()
	opts := record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli()}
	if pid >= 0 {
		opts.Transactional, opts.Producer = true, &record.Producer{ID: pid, Epoch: 0, BaseSequence: k.seq[pid]}
		k.seq[pid] += int32(len(kvs) / 2)
	}
	var recs []record.BatchRecord
	for i := 0; i+1 < len(kvs); i += 2 {
		recs = append(recs, record.BatchRecord{Key: []byte(kvs[i]), Value: []byte(kvs[i+1]), TimestampDelta: int64(i)})
	}
	batch, err := record.BuildBatch(opts, recs)
	if err != nil {
		k.t.Fatal(err)
	}
	req := harness.ProduceRequest(k.topic, 0, batch, -1, 5*time.Second)
	if pid >= 0 {
		tid := fmt.Sprintf("txn-%d", pid)
		req.TransactionID = &tid
	}
	if p := k.send(id, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 {
		k.t.Fatalf("produce %v (producer %d): error %d", kvs, pid, p.ErrorCode)
	}
}

// readAll reads the partition from its start to its high watermark at
// isolation level iso (the last record is plain, so the end is reached)
// and returns every value in order and the last value of each key.
func (k *keyedTxn) readAll(iso kgo.IsolationLevel, end int64) (values []string, latest map[string]string) {
	k.t.Helper()
	cl := k.c.Client(kgo.FetchIsolationLevel(iso), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{k.topic: {0: kgo.NewOffset().AtStart()}}))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	latest = map[string]string{}
	for done := false; !done; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			k.t.Fatalf("read %v up to %d: %v (got %q)", iso, end, ctx.Err(), values)
		}
		fs.EachError(func(_ string, _ int32, err error) { k.t.Logf("fetch error (retried): %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			values = append(values, string(r.Value))
			latest[string(r.Key)] = string(r.Value)
			done = done || r.Offset+1 >= end
		})
	}
	return values, latest
}

// TestCompactedTransactionsReadCommittedAfterCleaning: a compacted topic
// on three brokers gets committed and aborted transactions, interleaved,
// and plain writes. Once the cleaner has run, the aborted values are gone
// from the log itself (a read_uncommitted consumer no longer sees them),
// and a read_committed consumer sees the same latest value per key as
// before cleaning, with no aborted value ever; after the leader is
// killed, the new leader (its own log cleaned by its own cleaner) serves
// the same.
func TestCompactedTransactionsReadCommittedAfterCleaning(t *testing.T) {
	c := clustertest.MakeClusterWith(t, 3, clustertest.Options{Props: map[string]string{"log.cleaner.backoff.ms": "50",
		// Raw transactional batches of producers no coordinator knows: the
		// pre-KIP-890 partition behaviour.
		"transaction.partition.verification.enable": "false"}})
	const topic = "txn-compacted"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Admin().CreateTopic(ctx, 1, 3, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("300"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"), "delete.retention.ms": kadm.StringPtr("100"),
	}, topic); err != nil {
		t.Fatal(err)
	}
	leader := c.WaitServing(topic, 0)
	c.WaitMetadata(topic, 1)
	k := &keyedTxn{txnEnv: &txnEnv{t: t, c: c, topic: topic}, seq: map[int64]int32{}}

	want := map[string]string{}
	const rounds = 6
	for r := 0; r < rounds; r++ {
		committed := fmt.Sprintf("committed-%d", r)
		k.produce(leader, 100, "k0", committed, "k1", committed)
		k.produce(leader, 200, "k0", fmt.Sprintf("aborted-%d", r), "k2", fmt.Sprintf("aborted-%d", r))
		k.produce(leader, -1, "k3", fmt.Sprintf("plain-%d", r))
		k.produce(leader, 100, "k2", committed)
		k.produce(leader, 300, "k3", fmt.Sprintf("aborted-%d", r)) // an aborted write over a plain one
		k.marker(leader, 200, false)
		k.marker(leader, 100, true)
		k.marker(leader, 300, false)
		want["k0"], want["k1"], want["k2"], want["k3"] = committed, committed, committed, fmt.Sprintf("plain-%d", r)
	}
	// Plain writes of other keys roll the transactions out of the active
	// segment, which is never cleaned.
	for i := 0; i < 10; i++ {
		v := fmt.Sprintf("filler-%d-padding-padding-padding-padding", i)
		k.produce(leader, -1, fmt.Sprintf("f%d", i), v)
		want[fmt.Sprintf("f%d", i)] = v
	}
	end := k.listLatest(leader, 0)
	if lso := k.listLatest(leader, 1); lso != end {
		t.Fatalf("last stable offset %d, high watermark %d: a transaction is still open", lso, end)
	}
	noAborted := func(what string, values []string) {
		t.Helper()
		for _, v := range values {
			if strings.HasPrefix(v, "aborted") {
				t.Fatalf("%s: aborted value %q", what, v)
			}
		}
	}
	values, latest := k.readAll(kgo.ReadCommitted(), end)
	noAborted("read_committed before cleaning", values)
	if !maps.Equal(latest, want) {
		t.Fatalf("read_committed latest values %v, want %v", latest, want)
	}

	c.WaitFor("the cleaner removing the aborted records", 30*time.Second, func() (bool, string) {
		all, _ := k.readAll(kgo.ReadUncommitted(), end)
		n := 0
		for _, v := range all {
			if strings.HasPrefix(v, "aborted") {
				n++
			}
		}
		// 7 records a round and the fillers were written.
		return n == 0 && len(all) < 7*rounds+10, fmt.Sprintf("%d records, %d aborted", len(all), n)
	})
	values, latest = k.readAll(kgo.ReadCommitted(), end)
	noAborted("read_committed after cleaning", values)
	if !maps.Equal(latest, want) {
		t.Fatalf("after cleaning: read_committed latest values %v, want %v", latest, want)
	}

	c.Kill(leader)
	next := c.WaitServing(topic, 0)
	if next == leader {
		t.Fatalf("leadership stayed on killed broker %d", leader)
	}
	values, latest = k.readAll(kgo.ReadCommitted(), end)
	noAborted("read_committed from the new leader", values)
	if !maps.Equal(latest, want) {
		t.Fatalf("new leader %d: read_committed latest values %v, want %v", next, latest, want)
	}
}
