package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// owner tracks what one group member owns, from kgo's assignment callbacks.
type owner struct {
	mu    sync.Mutex
	parts map[int32]bool
}

func (o *owner) opts() []kgo.Opt {
	o.parts = map[int32]bool{}
	// Revoked and lost partitions are no longer owned alike.
	drop := func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, ps := range m {
			for _, p := range ps {
				delete(o.parts, p)
			}
		}
	}
	return []kgo.Opt{
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			o.mu.Lock()
			defer o.mu.Unlock()
			for _, ps := range m {
				for _, p := range ps {
					o.parts[p] = true
				}
			}
		}),
		kgo.OnPartitionsRevoked(drop),
		kgo.OnPartitionsLost(drop),
	}
}

func (o *owner) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.parts)
}

// pollAll keeps every client polling (group members only heartbeat and
// rebalance while polled) until stop is closed.
func pollAll(ctx context.Context, cls []*kgo.Client) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, cl := range cls {
		wg.Add(1)
		go func(cl *kgo.Client) {
			defer wg.Done()
			for ctx.Err() == nil {
				cl.PollRecords(ctx, 100)
			}
		}(cl)
	}
	return func() { cancel(); wg.Wait() }
}

// waitCounts waits until the owners own exactly want partitions each.
func waitCounts(t *testing.T, owners []*owner, want []int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok := true
		var got []int
		for i, o := range owners {
			got = append(got, o.count())
			ok = ok && got[i] == want[i]
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition counts %v, want %v", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestGroupBalancersSplitSixPartitions(t *testing.T) {
	b := harness.StartBroker(t, nil)
	for _, bal := range []struct {
		name string
		opt  kgo.GroupBalancer
	}{{"range", kgo.RangeBalancer()}, {"roundrobin", kgo.RoundRobinBalancer()}, {"cooperative-sticky", kgo.CooperativeStickyBalancer()}} {
		t.Run(bal.name, func(t *testing.T) {
			topic, group := "bal-"+bal.name, "g-"+bal.name
			createTopic(t, b, topic, 6, nil)
			owners := make([]*owner, 3)
			cls := make([]*kgo.Client, 3)
			for i := range cls {
				owners[i] = &owner{}
				opts := append(owners[i].opts(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.Balancers(bal.opt))
				cls[i] = b.Client(opts...)
			}
			stop := pollAll(context.Background(), cls)
			waitCounts(t, owners, []int{2, 2, 2}, 30*time.Second)
			// One leaves (Close sends LeaveGroup): the other two own all 6.
			stop()
			cls[2].Close()
			stop = pollAll(context.Background(), cls[:2])
			defer stop()
			waitCounts(t, owners[:2], []int{3, 3}, 30*time.Second)
		})
	}
}

func TestGroupMemberEvictedAfterSessionTimeout(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"group.min.session.timeout.ms": "1000"})
	createTopic(t, b, "evict", 4, nil)
	a, z := &owner{}, &owner{}
	ca := b.Client(append(a.opts(), kgo.ConsumerGroup("ev"), kgo.ConsumeTopics("evict"), kgo.SessionTimeout(2*time.Second), kgo.HeartbeatInterval(500*time.Millisecond))...)
	// A static member does not send LeaveGroup on Close: closing it is
	// "killed without LeaveGroup" as far as the coordinator can tell.
	cz := b.Client(append(z.opts(), kgo.ConsumerGroup("ev"), kgo.ConsumeTopics("evict"), kgo.SessionTimeout(2*time.Second), kgo.HeartbeatInterval(500*time.Millisecond), kgo.InstanceID("doomed"))...)
	stop := pollAll(context.Background(), []*kgo.Client{ca, cz})
	waitCounts(t, []*owner{a, z}, []int{2, 2}, 30*time.Second)
	stop()
	cz.Close()
	stop = pollAll(context.Background(), []*kgo.Client{ca})
	defer stop()
	start := time.Now()
	waitCounts(t, []*owner{a}, []int{4}, 30*time.Second)
	if el := time.Since(start); el < time.Second {
		t.Errorf("evicted after %v, before the 2 s session timeout could pass", el)
	}
}

func TestGroupConsumerResumesAfterCommit(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "resume", 3, nil)
	produce := func(from, n int) {
		cl := b.Client()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for i := from; i < from+n; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "resume", Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	consume := func(n int) map[string]bool {
		cl := b.Client(kgo.ConsumerGroup("resumer"), kgo.ConsumeTopics("resume"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		got := map[string]bool{}
		for len(got) < n {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("got %d of %d records", len(got), n)
			}
			fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
		}
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatal(err)
		}
		cl.Close()
		return got
	}
	produce(0, 30)
	if got := consume(30); len(got) != 30 {
		t.Fatalf("first run %d", len(got))
	}
	// Restart the broker too: commits must be durable in __consumer_offsets.
	b.Stop()
	b.Start()
	produce(30, 5)
	got := consume(5)
	for v := range got {
		var i int
		fmt.Sscan(v, &i)
		if i < 30 {
			t.Fatalf("re-read record %d committed before the restart", i)
		}
	}
}

func TestTwoGroupsEachReceiveEveryRecord(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "fanout", 2, nil)
	cl := b.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 20; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fanout", Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []string{"ga", "gb"} {
		c := b.Client(kgo.ConsumerGroup(g), kgo.ConsumeTopics("fanout"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		got := map[string]bool{}
		for len(got) < 20 {
			fs := c.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("group %s got %d of 20", g, len(got))
			}
			fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
		}
	}
}
