package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// consumed tracks what a group's consumers read, per partition and offset.
type consumed struct {
	seen map[int32]map[int64]int // partition → offset → times read
}

func (c *consumed) add(fs kgo.Fetches) (n int) {
	fs.EachRecord(func(r *kgo.Record) {
		if c.seen[r.Partition] == nil {
			c.seen[r.Partition] = map[int64]int{}
		}
		c.seen[r.Partition][r.Offset]++
		n++
	})
	return n
}

// covers reports whether every offset below end[p] was read.
func (c *consumed) covers(end map[int32]int64) bool {
	for p, e := range end {
		for o := int64(0); o < e; o++ {
			if c.seen[p][o] == 0 {
				return false
			}
		}
	}
	return true
}

// TestGroupSurvivesCoordinatorKill: a franz-go group consumer on a
// 3-broker cluster commits; the broker coordinating the group (the leader
// of its __consumer_offsets partition, as FindCoordinator says) is killed
// with SIGKILL. The new leader of that partition loads the group: the
// committed offsets are there, the running consumer keeps committing, a
// second consumer joining later rebalances the group there, nothing
// committed before the kill is read again and nothing is lost; and
// consumer-groups --describe on every surviving broker shows the group.
func TestGroupSurvivesCoordinatorKill(t *testing.T) {
	c := startCluster(t, 3, map[string]string{
		"offsets.topic.num.partitions":     "3",
		"group.initial.rebalance.delay.ms": "0",
	}, nil)
	const topic, group = "gt", "cg"
	c.createTopic(topic, 3, 3, nil)

	end := map[int32]int64{}
	producer := c.client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	produce := func(n int) {
		t.Helper()
		cl := producer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := 0; i < n; i++ {
			r, err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).First()
			if err != nil {
				t.Fatalf("produce: %v", err)
			}
			if r.Offset+1 > end[r.Partition] {
				end[r.Partition] = r.Offset + 1
			}
		}
	}
	produce(150)

	consumer := func(opts ...kgo.Opt) *kgo.Client {
		return c.client(append([]kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300 * time.Millisecond),
			kgo.SessionTimeout(10 * time.Second), kgo.HeartbeatInterval(500 * time.Millisecond),
			kgo.RetryTimeout(30 * time.Second)}, opts...)...)
	}
	before := &consumed{seen: map[int32]map[int64]int{}}
	a := consumer()
	n := 0
	deadline := time.Now().Add(60 * time.Second)
	for n < 75 {
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d records before the kill, want 75", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		n += before.add(a.PollFetches(ctx))
		cancel()
	}
	harness.CommitUncommitted(t, a, "consumer a before the kill")

	adm := c.admin()
	committed := fetchCommitted(t, adm, group)
	for p, ps := range before.seen {
		var max int64 = -1
		for o := range ps {
			if o > max {
				max = o
			}
		}
		if committed[p] != max+1 {
			t.Fatalf("committed %v, want one past the last read offset of every partition (%d for %d)", committed, max+1, p)
		}
	}

	// The coordinator, and its __consumer_offsets partition fully in sync
	// (so the kill loses no acknowledged commit).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	fc := adm.FindGroupCoordinators(ctx, group)
	cancel()
	if err := fc.Error(); err != nil {
		t.Fatal(err)
	}
	coord := fc[group].NodeID
	var offsetsPart int32 = -1
	for p := int32(0); p < 3; p++ {
		if s, ok := c.partitionState("__consumer_offsets", p); ok && s.Leader == coord {
			offsetsPart = p
		}
	}
	t.Logf("coordinator of %s: broker %d; committed %v", group, coord, committed)
	c.waitFor("full ISR of the group's __consumer_offsets partitions", 30*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, ok := c.partitionState("__consumer_offsets", p)
			if !ok || len(s.ISR) != 3 {
				return false, fmt.Sprintf("partition %d: %+v", p, s)
			}
		}
		return true, ""
	})

	c.brokers[coord].Kill()
	c.waitFor("a new leader for the group's __consumer_offsets partitions", 60*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, ok := c.partitionState("__consumer_offsets", p)
			if !ok || s.Leader < 0 || s.Leader == coord {
				return false, fmt.Sprintf("partition %d (coordinator's was %d): %+v", p, offsetsPart, s)
			}
		}
		return true, ""
	})
	// Clients of the survivors only.
	survivors := c.addrsExcept(coord)
	adm = kadm.NewClient(c.client(kgo.SeedBrokers(survivors...)))
	c.waitFor("the committed offsets from the new coordinator", 60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		if err := got.Error(); err != nil {
			return false, err.Error()
		}
		for p, o := range committed {
			r, ok := got.Lookup(topic, p)
			if !ok || r.At != o {
				return false, fmt.Sprintf("partition %d: %+v, want %d", p, r, o)
			}
		}
		return true, ""
	})

	produce(60)
	// The running consumer goes on; a second one joins (a rebalance on the
	// new coordinator) and starts its partitions from the committed offsets.
	after := &consumed{seen: map[int32]map[int64]int{}}
	b := consumer(kgo.SeedBrokers(survivors...))
	deadline = time.Now().Add(90 * time.Second)
	for !after.coversFrom(committed, end) {
		if time.Now().After(deadline) {
			t.Fatalf("after the kill read %v, want every offset from %v to %v", after.seen, committed, end)
		}
		for _, cl := range []*kgo.Client{a, b} {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			after.add(cl.PollFetches(ctx))
			cancel()
		}
	}
	// Commit until every partition has a commit: a rebalance between a
	// poll and its commit drops the uncommitted positions, and the new
	// owner reads the partition again from the last commit.
	deadline = time.Now().Add(60 * time.Second)
	for {
		for _, cl := range []*kgo.Client{a, b} {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			after.add(cl.PollFetches(ctx))
			cancel()
			harness.CommitUncommitted(t, cl, "after the kill")
		}
		got := fetchCommitted(t, adm, group)
		if len(got) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("committed %v, want all 3 partitions", got)
		}
	}
	for p, ps := range after.seen {
		for o := range ps {
			if o < committed[p] {
				t.Errorf("partition %d offset %d read again after the kill (committed %d before it)", p, o, committed[p])
			}
		}
	}
	if !before.union(after).covers(end) {
		t.Fatalf("records lost: before %v after %v end %v", before.seen, after.seen, end)
	}

	// Every surviving broker's consumer-groups --describe finds the group
	// (FindCoordinator → the new coordinator) with its three partitions.
	for id, br := range c.brokers {
		if id == coord {
			continue
		}
		out := describeGroup(t, br, group)
		rows := 0
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) >= 6 && f[0] == group && f[1] == topic {
				rows++
				cur, err := strconv.ParseInt(f[3], 10, 64)
				p, _ := strconv.Atoi(f[2])
				if err != nil || cur < committed[int32(p)] {
					t.Errorf("broker %d: row %q: current offset below the pre-kill commit %d", id, l, committed[int32(p)])
				}
			}
		}
		if rows != 3 {
			t.Fatalf("broker %d: describe shows %d rows for %s, want 3:\n%s", id, rows, topic, out)
		}
	}

	// Deleting the topic drops its committed offsets on the coordinator
	// (the controller's UpdateMetadata, handleDeletedPartitions).
	a.Close()
	b.Close()
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.DeleteTopics(ctx, topic); err != nil {
		t.Fatal(err)
	}
	c.waitFor("the deleted topic's offsets gone from the group", 60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		return len(got[topic]) == 0, fmt.Sprint(got)
	})
}

// coversFrom reports whether every offset in [from[p], end[p]) was read.
func (c *consumed) coversFrom(from, end map[int32]int64) bool {
	for p, e := range end {
		for o := from[p]; o < e; o++ {
			if c.seen[p][o] == 0 {
				return false
			}
		}
	}
	return true
}

func (c *consumed) union(o *consumed) *consumed {
	u := &consumed{seen: map[int32]map[int64]int{}}
	for _, x := range []*consumed{c, o} {
		for p, ps := range x.seen {
			if u.seen[p] == nil {
				u.seen[p] = map[int64]int{}
			}
			for off, n := range ps {
				u.seen[p][off] += n
			}
		}
	}
	return u
}

// fetchCommitted is the group's committed offset per partition.
func fetchCommitted(t *testing.T, adm *kadm.Client, group string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = got.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	got.Each(func(r kadm.OffsetResponse) { out[r.Partition] = r.At })
	return out
}

// describeGroup runs gregor consumer-groups --describe against one broker.
func describeGroup(t *testing.T, b *harness.Broker, group string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, harness.Binary(t), "consumer-groups", "--bootstrap-server", b.Addr(), "--describe", "--group", group).CombinedOutput()
	if err != nil {
		t.Fatalf("consumer-groups --describe on %s: %v\n%s", b.Addr(), err, out)
	}
	return string(out)
}

// TestCoordinatorResignsAndReloadsOnLeadershipReturn: the coordinator of a
// group loses its __consumer_offsets partition while alive (its ZooKeeper
// session expires), another broker takes the group over and a newer commit
// lands there; when leadership comes back (preferred replica election) the
// first broker serves the newer commit, not the groups it had loaded
// before (it resigned them when it became a follower, and loaded the
// partition again when it became leader).
func TestCoordinatorResignsAndReloadsOnLeadershipReturn(t *testing.T) {
	c := startCluster(t, 3, map[string]string{"offsets.topic.num.partitions": "3"}, []int32{1, 2, 3})
	const topic = "rt"
	c.createTopic(topic, 1, 3, nil)
	adm := c.admin()

	// A group coordinated by a broker that is not the controller (cutting
	// off the controller would test controller failover instead).
	ctrl := c.controllerID()
	var group string
	var coord int32
	c.waitFor("a group coordinated by a non-controller broker", 60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for i := 0; i < 12; i++ {
			g := fmt.Sprintf("rg-%d", i)
			r := adm.FindGroupCoordinators(ctx, g)[g]
			if r.Err == nil && r.NodeID != ctrl {
				group, coord = g, r.NodeID
				return true, ""
			}
		}
		return false, "every group coordinated by the controller or not ready"
	})
	var part int32 = -1
	for p := int32(0); p < 3; p++ {
		if s, ok := c.partitionState("__consumer_offsets", p); ok && s.Leader == coord {
			part = p
		}
	}
	if part < 0 {
		t.Fatalf("no __consumer_offsets partition led by %d", coord)
	}
	var td kadm.TopicDetail
	c.waitFor("__consumer_offsets in the metadata", 30*time.Second, func() (bool, string) {
		var err error
		td, err = describe(t, c.brokers[coord], "__consumer_offsets")
		return err == nil && len(td.Partitions) == 3, fmt.Sprint(err)
	})
	if td.Partitions[part].Replicas[0] != coord {
		t.Skipf("broker %d leads __consumer_offsets-%d but is not its preferred replica %v", coord, part, td.Partitions[part].Replicas)
	}
	c.waitFor("full ISR of __consumer_offsets", 30*time.Second, func() (bool, string) {
		s, ok := c.partitionState("__consumer_offsets", part)
		return ok && len(s.ISR) == 3, fmt.Sprintf("%+v", s)
	})
	commitOffset(t, adm, group, topic, 10)
	if got := fetchCommitted(t, adm, group)[0]; got != 10 {
		t.Fatalf("committed %d, want 10", got)
	}

	c.proxies[coord].Pause()
	c.waitFor("leadership of the group's partition moved away", 3*sessionTimeout+30*time.Second, func() (bool, string) {
		s, ok := c.partitionState("__consumer_offsets", part)
		return ok && s.Leader >= 0 && s.Leader != coord && !contains(s.ISR, coord), fmt.Sprintf("%+v", s)
	})
	// A client of the other brokers only commits there.
	others := c.addrsExcept(coord)
	oadm := kadm.NewClient(c.client(kgo.SeedBrokers(others...)))
	commitOffset(t, oadm, group, topic, 20)

	c.proxies[coord].Resume()
	c.waitFor("the old coordinator back in the partition's ISR", 3*sessionTimeout+60*time.Second, func() (bool, string) {
		s, ok := c.partitionState("__consumer_offsets", part)
		return ok && contains(s.ISR, coord), fmt.Sprintf("%+v", s)
	})
	c.waitFor("the preferred replica elected again", 60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		set := kadm.TopicsSet{}
		set.Add("__consumer_offsets", part)
		if _, err := oadm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set); err != nil {
			return false, err.Error()
		}
		s, _ := c.partitionState("__consumer_offsets", part)
		return s.Leader == coord, fmt.Sprintf("%+v", s)
	})
	// The returning leader serves what was committed while it was away.
	c.waitFor("the newer commit from the returning coordinator", 60*time.Second, func() (bool, string) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.brokers[coord].Addr()))
		if err != nil {
			return false, err.Error()
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a := kadm.NewClient(cl)
		if r := a.FindGroupCoordinators(ctx, group)[group]; r.Err != nil || r.NodeID != coord {
			return false, fmt.Sprintf("coordinator %+v", r)
		}
		got, err := a.FetchOffsets(ctx, group)
		if err == nil {
			err = got.Error()
		}
		if err != nil {
			return false, err.Error()
		}
		r, _ := got.Lookup(topic, 0)
		if r.At != 20 {
			t.Fatalf("returning coordinator serves offset %d, want 20 (its groups from before it lost leadership)", r.At)
		}
		return true, ""
	})
}

// commitOffset commits offset for partition 0 of topic as a simple
// (memberless) commit, retrying while the coordinator moves.
func commitOffset(t *testing.T, adm *kadm.Client, group, topic string, offset int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		offs := kadm.Offsets{}
		offs.AddOffset(topic, 0, offset, -1)
		err := adm.CommitAllOffsets(ctx, group, offs)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("commit %d: %v", offset, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// addrsExcept lists the addresses of every broker but id, sorted.
func (c *cluster) addrsExcept(id int32) []string {
	var out []string
	for bid, b := range c.brokers {
		if bid != id {
			out = append(out, b.Addr())
		}
	}
	sort.Strings(out)
	return out
}
