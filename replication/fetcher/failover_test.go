package fetcher

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
)

// tryProduce is produce without t.Fatal, for producer goroutines: it
// returns the base offset, or an error (transport or Kafka code).
func tryProduce(b *testBroker, tp partition.TopicPartition, val string) (int64, error) {
	batch, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli()},
		[]record.BatchRecord{{Value: []byte(val)}})
	if err != nil {
		return -1, err
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 2000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = tp.Partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, b.client.SeedBrokers()[0])
	if err != nil {
		return -1, err
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return -1, err
	}
	return p.BaseOffset, nil
}

// recordsAt maps every offset of a broker's log to its record value.
func recordsAt(t *testing.T, b *testBroker, tp partition.TopicPartition) map[int64]string {
	t.Helper()
	l, ok := b.logs.Get(tp)
	if !ok {
		t.Fatalf("broker %d has no log for %s", b.id, tp)
	}
	out := map[int64]string{}
	fd, err := l.Read(l.LogStartOffset(), 1<<30, l.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Release()
	for _, r := range fd.Regions {
		buf := make([]byte, r.Len)
		if _, err := r.File.ReadAt(buf, r.Pos); err != nil {
			t.Fatal(err)
		}
		for rest := buf; len(rest) > 0; {
			h, err := record.ParseHeader(rest)
			if err != nil {
				t.Fatal(err)
			}
			if err := record.Records(h, rest[:h.Size()], 1<<20, func(rec *record.Record) error {
				out[rec.Offset(&h)] = string(rec.Value)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			rest = rest[h.Size():]
		}
	}
	return out
}

// TestLeaderFailoverKeepsAcknowledgedRecords runs a continuous acks=all
// producer with min.insync.replicas=2 against a 3-replica partition, stops
// the leader, elects the first live ISR member as the controller would
// (LeaderAndIsr with the next epoch), restarts the old leader as a
// follower, and checks that every acknowledged record sits at its
// acknowledged offset on every replica and that no offset holds two
// different records.
func TestLeaderFailoverKeepsAcknowledgedRecords(t *testing.T) {
	c := newCluster(t, 1, 2, 3)
	replicas := []int32{1, 2, 3}
	c.apply(tp0, 1, 0, replicas, replicas, 2)

	var leader atomic.Int32
	leader.Store(1)
	var (
		mu    sync.Mutex
		acked = map[int64]string{}
		errs  = map[string]int{}
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; n < 100000 && ctx.Err() == nil; n++ {
			val := fmt.Sprintf("v%06d", n)
			mu.Lock()
			b := c.brokers[leader.Load()]
			mu.Unlock()
			off, err := tryProduce(b, tp0, val)
			mu.Lock()
			if err != nil {
				errs[err.Error()]++
			} else {
				acked[off] = val
			}
			mu.Unlock()
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond): // client retry backoff
				}
			}
		}
	}()
	countAcked := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	eventually(t, 10*time.Second, "acknowledged records before the failover", func() bool { return countAcked() >= 100 })

	// The leader dies; the controller elects broker 2 (first live ISR
	// member in assignment order) with ISR {2,3} at epoch 1.
	mu.Lock()
	c.stop(c.brokers[1])
	mu.Unlock()
	isr, _ := c.isr.get(tp0)
	isr = slices.DeleteFunc(isr, func(id int32) bool { return id == 1 })
	// Members, not order: a follower that fell behind under load and
	// rejoined was appended (Kafka's expandIsr), e.g. [1 3 2].
	if !slices.Equal(slices.Sorted(slices.Values(isr)), []int32{2, 3}) {
		t.Fatalf("ISR before the election %v, want [2 3]", isr)
	}
	c.apply(tp0, 2, 1, isr, replicas, 2)
	leader.Store(2)
	before := countAcked()
	eventually(t, 10*time.Second, "acknowledged records after the failover", func() bool { return countAcked() >= before+100 })

	// The old leader comes back as a follower, truncates what the new
	// leader lacks, catches up and rejoins the ISR.
	mu.Lock()
	c.start(1, c.dirs[1])
	mu.Unlock()
	_, v := c.isr.get(tp0)
	c.brokers[1].rm.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp0, Leader: 2, LeaderEpoch: 1, ISR: isr, Replicas: replicas,
		ZkVersion: v, Config: storage.DefaultLogConfig(), MinInsyncReplicas: 2}})
	eventually(t, 10*time.Second, "old leader rejoins the ISR", func() bool {
		got, _ := c.isr.get(tp0)
		return slices.Equal(slices.Sorted(slices.Values(got)), []int32{1, 2, 3}) // appended: [2 3 1]
	})
	before = countAcked()
	eventually(t, 10*time.Second, "acknowledged records after the rejoin", func() bool { return countAcked() >= before+50 })
	cancel()
	wg.Wait()

	lead := c.brokers[2]
	eventually(t, 10*time.Second, "replicas converge", func() bool {
		leo := view(lead, tp0).LogEndOffset
		return view(lead, tp0).HighWatermark == leo && view(c.brokers[1], tp0).LogEndOffset == leo && view(c.brokers[3], tp0).LogEndOffset == leo
	})
	logs := map[int32]map[int64]string{}
	for _, id := range replicas {
		logs[id] = recordsAt(t, c.brokers[id], tp0)
	}
	for off, val := range acked {
		for _, id := range replicas {
			if got, ok := logs[id][off]; !ok || got != val {
				t.Fatalf("acknowledged %q at offset %d; broker %d has %q (present %v)", val, off, id, got, ok)
			}
		}
	}
	for off, val := range logs[2] {
		for _, id := range []int32{1, 3} {
			if got := logs[id][off]; got != val {
				t.Fatalf("offset %d: leader has %q, broker %d has %q", off, val, id, got)
			}
		}
	}
	if len(logs[1]) != len(logs[2]) || len(logs[3]) != len(logs[2]) {
		t.Fatalf("log sizes differ: %d %d %d", len(logs[1]), len(logs[2]), len(logs[3]))
	}
	t.Logf("acknowledged %d records, log holds %d; produce errors: %v", len(acked), len(logs[2]), errs)
}
