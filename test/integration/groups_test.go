package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// owner tracks what one group member owns, from kgo's assignment callbacks,
// and the generation of every assignment it got: kgo calls
// OnPartitionsAssigned once per completed rebalance, even when nothing new
// is assigned, so gens counts the member's rebalances.
type owner struct {
	mu    sync.Mutex
	parts map[int32]bool
	gens  []int32
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
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, m map[string][]int32) {
			_, gen := cl.GroupMetadata()
			o.mu.Lock()
			defer o.mu.Unlock()
			o.gens = append(o.gens, gen)
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

// generations returns the generations of the assignments so far.
func (o *owner) generations() []int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]int32(nil), o.gens...)
}

// oneMoreRebalance checks that o was assigned exactly once since it had
// been assigned before times, at the generation after the last of those.
func oneMoreRebalance(t *testing.T, name string, o *owner, before []int32) {
	t.Helper()
	after := o.generations()
	t.Logf("%s: assigned at generations %v", name, after)
	if len(before) == 0 || len(after) != len(before)+1 || after[len(after)-1] != before[len(before)-1]+1 {
		t.Fatalf("%s: assignments at generations %v, then %v; want exactly one rebalance, to the next generation", name, before, after[min(len(before), len(after)):])
	}
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
			// One leaves (Close sends LeaveGroup): the other two own all 6
			// after one rebalance — one more assignment each, at the next
			// generation (a cooperative balancer needs no second round:
			// the leaver's partitions are free, nobody must revoke).
			stop()
			before := [][]int32{owners[0].generations(), owners[1].generations()}
			if g0, g1 := before[0], before[1]; len(g0) == 0 || len(g1) == 0 || g0[len(g0)-1] != g1[len(g1)-1] {
				t.Fatalf("before the leave the members were assigned at generations %v and %v", g0, g1)
			}
			cls[2].Close()
			stop = pollAll(context.Background(), cls[:2])
			defer stop()
			waitCounts(t, owners[:2], []int{3, 3}, 30*time.Second)
			for i := range 2 {
				oneMoreRebalance(t, fmt.Sprintf("member %d", i), owners[i], before[i])
			}
		})
	}
}

// TestGroupMemberEvictedAfterSessionTimeout: a kcat balanced consumer
// (librdkafka, -G) shares a group with a franz-go member and is killed with
// SIGKILL, so it never sends LeaveGroup and its connection just drops. The
// coordinator must evict it when its session.timeout.ms (6 s) runs out —
// not when the connection closes — and then the franz-go member owns
// every partition after one rebalance.
func TestGroupMemberEvictedAfterSessionTimeout(t *testing.T) {
	_, err := exec.LookPath("kcat")
	harness.NeedTool(t, err == nil, "kcat")
	const session, heartbeat = 6 * time.Second, 500 * time.Millisecond
	b := harness.StartBroker(t, map[string]string{"group.min.session.timeout.ms": "6000"})
	createTopic(t, b, "evict", 4, nil)
	a := &owner{}
	// Range: the one assignor kgo and librdkafka (range,roundrobin) share.
	ca := b.Client(append(a.opts(), kgo.ConsumerGroup("ev"), kgo.ConsumeTopics("evict"), kgo.Balancers(kgo.RangeBalancer()),
		kgo.SessionTimeout(session), kgo.HeartbeatInterval(heartbeat))...)
	stop := pollAll(context.Background(), []*kgo.Client{ca})
	defer stop()
	waitCounts(t, []*owner{a}, []int{4}, 30*time.Second)

	dir := t.TempDir()
	logf, err := os.Create(filepath.Join(dir, "kcat.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	kc := exec.Command("kcat", "-b", b.Addr(), "-G", "ev", "-X", "client.id=doomed",
		"-X", fmt.Sprintf("session.timeout.ms=%d", session.Milliseconds()), "-X", fmt.Sprintf("heartbeat.interval.ms=%d", heartbeat.Milliseconds()),
		"-X", "partition.assignment.strategy=range", "evict")
	kc.Stdout, kc.Stderr = logf, logf
	if err := kc.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = kc.Wait(); close(exited) }()
	t.Cleanup(func() { _ = kc.Process.Kill(); <-exited })
	kcatLog := func() string { out, _ := os.ReadFile(logf.Name()); return string(out) }

	// Both members Stable with two partitions each.
	adm := kadm.NewClient(b.Client())
	members := func() map[string]int {
		return stableMembers(context.Background(), adm, "ev", func(m kadm.DescribedGroupMember) string { return m.ClientID })
	}
	deadline := time.Now().Add(60 * time.Second)
	for m := members(); m["doomed"] != 2 || a.count() != 2; m = members() {
		if time.Now().After(deadline) {
			t.Fatalf("kcat never got half the partitions: members %v, franz-go member owns %d\n--- kcat ---\n%s", m, a.count(), kcatLog())
		}
		time.Sleep(50 * time.Millisecond) // polling the group over the admin API
	}
	before := a.generations()

	killed := time.Now()
	if err := kc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("kcat still running 10 s after SIGKILL")
	}
	waitCounts(t, []*owner{a}, []int{4}, 30*time.Second)
	el := time.Since(killed)
	t.Logf("franz-go member owned all 4 partitions %v after kcat's SIGKILL (session timeout %v)", el.Round(time.Millisecond), session)
	// kcat's last heartbeat was at most one interval before the kill, so
	// its session cannot have run out sooner than session - heartbeat.
	if lo := session - heartbeat - 500*time.Millisecond; el < lo {
		t.Fatalf("the killed member was evicted %v after SIGKILL, before its %v session timeout (at least %v) could pass", el, session, lo)
	}
	if hi := session + 4*time.Second; el > hi {
		t.Fatalf("the killed member was evicted %v after SIGKILL: more than %v for a %v session timeout", el, hi, session)
	}
	oneMoreRebalance(t, "franz-go member", a, before)
	if m := members(); len(m) != 1 || m["doomed"] != 0 {
		t.Fatalf("group members after the eviction: %v", m)
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
