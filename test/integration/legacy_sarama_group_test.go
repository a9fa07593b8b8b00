package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// saramaGroupHandler counts the records its session sees and marks each
// one, so Sarama commits them (OffsetCommit at the version its pinned
// Kafka version implies).
type saramaGroupHandler struct {
	mu   sync.Mutex
	seen map[string]bool
	want int
	done chan struct{}
	once sync.Once
}

func (h *saramaGroupHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaGroupHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *saramaGroupHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		h.mu.Lock()
		h.seen[string(m.Value)] = true
		n := len(h.seen)
		h.mu.Unlock()
		s.MarkMessage(m, "")
		if n >= h.want {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

// TestLegacySaramaConsumerGroup: Sarama pinned to V0_10_2_0 (JoinGroup
// v1, SyncGroup v0, Heartbeat v0, OffsetCommit v2, OffsetFetch v1, Fetch v3
// with down-conversion to message format v1) consumes a 3-partition topic
// in a group, commits, and a second run of the group starts after the
// commits: it sees only records produced after the first run.
func TestLegacySaramaConsumerGroup(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"group.initial.rebalance.delay.ms": "0"})
	const topic, group = "sarama-group", "sarama-g"
	createTopic(t, b, topic, 3, nil)
	cl := b.Client(kgo.DefaultProduceTopic(topic))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	produce := func(prefix string, n int) {
		for i := 0; i < n; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := func(want int) map[string]bool {
		cfg := sarama.NewConfig()
		cfg.Version = sarama.V0_10_2_0
		cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
		cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
		cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
		cg, err := sarama.NewConsumerGroup([]string{b.Addr()}, group, cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := &saramaGroupHandler{seen: map[string]bool{}, want: want, done: make(chan struct{})}
		rctx, rcancel := context.WithCancel(ctx)
		errs := make(chan error, 1)
		go func() {
			for rctx.Err() == nil {
				if err := cg.Consume(rctx, []string{topic}, h); err != nil && rctx.Err() == nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
		select {
		case <-h.done:
		case err := <-errs:
			t.Fatalf("consume: %v", err)
		case <-time.After(60 * time.Second):
			t.Fatalf("saw %d of %d records in 60 s", len(h.seen), want)
		}
		rcancel()
		<-errs
		if err := cg.Close(); err != nil { // commits what was marked
			t.Fatalf("close: %v", err)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.seen
	}
	produce("first", 30)
	if seen := run(30); len(seen) != 30 {
		t.Fatalf("first run saw %d records", len(seen))
	}
	adm := kadm.NewClient(cl)
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var committed int64
	offs.Each(func(o kadm.OffsetResponse) { committed += o.At })
	if committed != 30 {
		t.Fatalf("the group committed %d records' worth, want 30", committed)
	}
	produce("second", 12)
	seen := run(12)
	for v := range seen {
		if len(v) < 6 || v[:6] != "second" {
			t.Fatalf("the second run re-read %q: the commits were not used", v)
		}
	}
}
