package controller

import (
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// multiCounter counts the Multi transactions and their ops that reach the
// store.
type multiCounter struct {
	metastore.Store
	mu    sync.Mutex
	multi []int // ops per call
}

func (m *multiCounter) Multi(ops ...metastore.Op) ([]metastore.OpResult, error) {
	m.mu.Lock()
	m.multi = append(m.multi, len(ops))
	m.mu.Unlock()
	return m.Store.Multi(ops...)
}

func (m *multiCounter) calls() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.multi
	m.multi = nil
	return out
}

// executorEnv is a controller that won epoch 3 over an embedded store (not
// started: the executor is driven directly) and knows topics a and b.
func executorEnv(t testing.TB, partitions int32) (*Controller, *multiCounter) {
	t.Helper()
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := zkmeta.EnsurePersistentPaths(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(zkmeta.ControllerEpochPath, zkmeta.EncodeControllerEpoch(3), false); err != nil {
		t.Fatal(err)
	}
	mc := &multiCounter{Store: s}
	c := New(mc, &fakeRM{}, testConfig(), Options{})
	c.epoch, c.epochZkVersion = 3, 0
	for _, name := range []string{"a", "b"} {
		ts := &topicState{name: name, assignment: map[int32][]int32{}, state: map[int32]*partState{}}
		for p := int32(0); p < partitions; p++ {
			ts.assignment[p] = []int32{0}
		}
		c.topics[name] = ts
	}
	return c, mc
}

func readState(t *testing.T, s metastore.Store, topic string, p int32) (zkmeta.PartitionState, int32) {
	t.Helper()
	data, v, err := s.Get(zkmeta.PartitionStatePath(topic, p))
	if err != nil {
		t.Fatalf("%s-%d: %v", topic, p, err)
	}
	st, err := zkmeta.DecodePartitionState(data)
	if err != nil {
		t.Fatal(err)
	}
	return st, v
}

func TestWriteStatesBatchesFencedTransactions(t *testing.T) {
	const n = 300 // per topic: 600 creates of 2 ops, 250 per transaction
	c, mc := executorEnv(t, n)
	var ws []stateWrite
	for _, name := range []string{"a", "b"} {
		for p := int32(0); p < n; p++ {
			ws = append(ws, stateWrite{tp: partition.TopicPartition{Topic: name, Partition: p}, create: true,
				next: PartitionLeadership{Leader: 0, ISR: []int32{0}}})
		}
	}
	written, conflicts, err := c.writeStates(ws)
	if err != nil || len(conflicts) != 0 || len(written) != 2*n {
		t.Fatalf("creates: %d written, %d conflicts, %v", len(written), len(conflicts), err)
	}
	if got := mc.calls(); !reflect.DeepEqual(got, []int{501, 501, 201}) {
		t.Fatalf("Multi calls (ops each, fence included) %v, want [501 501 201]", got)
	}
	st, v := readState(t, mc, "b", n-1)
	if st.ControllerEpoch != 3 || st.Leader != 0 || st.LeaderEpoch != 0 || v != 0 {
		t.Fatalf("created state %+v version %d", st, v)
	}
	// Sets: one op each, conditional on the recorded versions.
	ws = ws[:0]
	for _, name := range []string{"a", "b"} {
		for p := int32(0); p < n; p++ {
			cur := c.topics[name].state[p]
			ws = append(ws, stateWrite{tp: partition.TopicPartition{Topic: name, Partition: p}, version: cur.zkVersion,
				next: PartitionLeadership{Leader: 0, LeaderEpoch: 1, ISR: []int32{0}}})
		}
	}
	if written, conflicts, err = c.writeStates(ws); err != nil || len(conflicts) != 0 || len(written) != 2*n {
		t.Fatalf("sets: %d written, %d conflicts, %v", len(written), len(conflicts), err)
	}
	if got := mc.calls(); !reflect.DeepEqual(got, []int{501, 101}) {
		t.Fatalf("Multi calls %v, want [501 101]", got)
	}
	if ps := c.topics["a"].state[7]; ps.zkVersion != 1 || ps.LeaderEpoch != 1 {
		t.Fatalf("recorded state %+v", ps)
	}
}

func TestWriteStatesDropsConflictKeepsRest(t *testing.T) {
	c, mc := executorEnv(t, 3)
	for p := int32(0); p < 3; p++ {
		if err := c.writeState(c.topics["a"], p, PartitionLeadership{Leader: 0, ISR: []int32{0}}); err != nil {
			t.Fatal(err)
		}
	}
	// A leader's AlterIsr moves partition 1's znode behind the controller.
	alter := zkmeta.PartitionState{ControllerEpoch: 3, Leader: 0, LeaderEpoch: 0, ISR: []int32{0, 9}}
	if _, err := mc.Set(zkmeta.PartitionStatePath("a", 1), alter.Encode(), 0); err != nil {
		t.Fatal(err)
	}
	mc.calls()
	var ws []stateWrite
	for p := int32(0); p < 3; p++ {
		ws = append(ws, stateWrite{tp: partition.TopicPartition{Topic: "a", Partition: p}, version: 0,
			next: PartitionLeadership{Leader: -1, LeaderEpoch: 1, ISR: []int32{0}}})
	}
	written, conflicts, err := c.writeStates(ws)
	if err != nil || len(written) != 2 || len(conflicts) != 1 || conflicts[0].tp.Partition != 1 {
		t.Fatalf("written %v conflicts %v err %v", written, conflicts, err)
	}
	if got := mc.calls(); !reflect.DeepEqual(got, []int{4, 3}) {
		t.Fatalf("Multi calls %v, want [4 3] (refused, then retried without partition 1)", got)
	}
	if st, _ := readState(t, mc, "a", 1); !reflect.DeepEqual(st.ISR, []int32{0, 9}) {
		t.Fatalf("conflicting partition overwritten: %+v", st)
	}
	if st, v := readState(t, mc, "a", 2); st.Leader != -1 || v != 1 {
		t.Fatalf("partition 2: %+v version %d", st, v)
	}
}

func TestWriteStatesFencedByControllerEpoch(t *testing.T) {
	c, mc := executorEnv(t, 2)
	// A newer controller bumped /controller_epoch: this one is deposed.
	if _, err := mc.Set(zkmeta.ControllerEpochPath, zkmeta.EncodeControllerEpoch(4), 0); err != nil {
		t.Fatal(err)
	}
	ws := []stateWrite{
		{tp: partition.TopicPartition{Topic: "a", Partition: 0}, create: true, next: PartitionLeadership{Leader: 0, ISR: []int32{0}}},
		{tp: partition.TopicPartition{Topic: "a", Partition: 1}, create: true, next: PartitionLeadership{Leader: 0, ISR: []int32{0}}},
	}
	written, conflicts, err := c.writeStates(ws)
	if !errors.Is(err, metastore.ErrBadVersion) || len(written) != 0 || len(conflicts) != 0 {
		t.Fatalf("deposed: written %v conflicts %v err %v, want ErrBadVersion and nothing", written, conflicts, err)
	}
	if ok, _ := mc.Exists(zkmeta.PartitionStatePath("a", 0)); ok {
		t.Fatal("a deposed controller wrote a state")
	}
	if c.topics["a"].state[0] != nil {
		t.Fatal("unwritten state recorded")
	}
}

// TestBrokerDeathIsOneTransactionAndOneRequestPerBroker: when the leader
// of many partitions dies, the controller writes all their new states in
// one fenced Multi and sends each surviving peer one LeaderAndIsr.
func TestBrokerDeathIsOneTransactionAndOneRequestPerBroker(t *testing.T) {
	var mc *multiCounter
	e, peers := startCluster3Over(t, func(s metastore.Store) metastore.Store { mc = &multiCounter{Store: s}; return mc })
	c, s := e.c, e.store
	mc.calls() // the election's Multi (/controller and /controller_epoch)
	const n = 20
	assignment := map[int32][]int32{}
	for p := int32(0); p < n; p++ {
		assignment[p] = []int32{1, 2, 0}
	}
	if res := c.CreateTopics([]NewTopic{{Name: "t", NumPartitions: -1, ReplicationFactor: -1, Assignment: assignment}}, false); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	e.settled(t)
	if got := mc.calls(); len(got) != 1 || got[0] != 1+2*n {
		t.Fatalf("topic creation: Multi calls %v, want one of %d ops (fence, node and state per partition)", got, 1+2*n)
	}
	before := peers.count(2, 4)
	if err := s.Delete(zkmeta.BrokerPath(1), metastore.AnyVersion); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "every partition led by broker 2", func() bool {
		for p := int32(0); p < n; p++ {
			if st, _ := e.state(t, "t", p); st.Leader != 2 {
				return false
			}
		}
		return true
	})
	e.settled(t)
	if got := mc.calls(); len(got) != 1 || got[0] != 1+n {
		t.Fatalf("broker death: Multi calls %v, want one of %d ops", got, 1+n)
	}
	if got := peers.count(2, 4) - before; got != 1 {
		t.Fatalf("broker 2 got %d LeaderAndIsr requests for the event, want 1", got)
	}
	var lisr *kmsg.LeaderAndISRRequest
	for _, q := range peers.sentTo(2) {
		if r, ok := q.(*kmsg.LeaderAndISRRequest); ok {
			lisr = r
		}
	}
	if parts := len(lisr.TopicStates[0].PartitionStates); len(lisr.TopicStates) != 1 || parts != n {
		t.Fatalf("the request carries %d topics, %d partitions; want 1 topic of %d", len(lisr.TopicStates), parts, n)
	}
	if ps := lisr.TopicStates[0].PartitionStates[0]; ps.Leader != 2 || ps.LeaderEpoch != 1 || !reflect.DeepEqual(ps.ISR, []int32{2, 0}) {
		t.Fatalf("state sent: leader %d epoch %d ISR %v, want 2, 1, [2 0]", ps.Leader, ps.LeaderEpoch, ps.ISR)
	}
}

// sentTo is a copy of the requests sent to broker id.
func (r *recPeers) sentTo(id int32) []kmsg.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]kmsg.Request(nil), r.sent[id]...)
}

// BenchmarkStateWrites compares writing 1000 partition states (two
// topics of 500) in the executor's batched transactions with one fenced
// Multi per partition (the controller before the executor), over the
// embedded store (each transaction persists its snapshot once).
func BenchmarkStateWrites(b *testing.B) {
	for _, mode := range []string{"batched", "per-partition"} {
		b.Run(mode, func(b *testing.B) {
			const n = 500
			c, _ := executorEnv(b, n)
			var creates []stateWrite
			for _, name := range []string{"a", "b"} {
				for p := int32(0); p < n; p++ {
					creates = append(creates, stateWrite{tp: partition.TopicPartition{Topic: name, Partition: p}, create: true,
						next: PartitionLeadership{Leader: 0, ISR: []int32{0}}})
				}
			}
			if _, _, err := c.writeStates(creates); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var ws []stateWrite
				for _, name := range []string{"a", "b"} {
					for p := int32(0); p < n; p++ {
						cur := c.topics[name].state[p]
						next := PartitionLeadership{Leader: 0, LeaderEpoch: cur.LeaderEpoch + 1, ISR: []int32{0}}
						ws = append(ws, stateWrite{tp: partition.TopicPartition{Topic: name, Partition: p}, version: cur.zkVersion, next: next})
					}
				}
				if mode == "batched" {
					if _, cf, err := c.writeStates(ws); err != nil || len(cf) > 0 {
						b.Fatal(err, cf)
					}
					continue
				}
				for _, w := range ws {
					if err := c.writeState(c.topics[w.tp.Topic], w.tp.Partition, w.next); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestControlledShutdownIsOneTransactionAndOneRequestPerBroker: the
// controlled shutdown of the leader of many partitions moves their
// leadership in one fenced Multi and sends each surviving peer one
// LeaderAndIsr carrying every moved partition.
func TestControlledShutdownIsOneTransactionAndOneRequestPerBroker(t *testing.T) {
	var mc *multiCounter
	e, peers := startCluster3Over(t, func(s metastore.Store) metastore.Store { mc = &multiCounter{Store: s}; return mc })
	c := e.c
	const n = 20
	assignment := map[int32][]int32{}
	for p := int32(0); p < n; p++ {
		assignment[p] = []int32{1, 2, 0}
	}
	if res := c.CreateTopics([]NewTopic{{Name: "t", NumPartitions: -1, ReplicationFactor: -1, Assignment: assignment}}, false); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	e.settled(t)
	mc.calls()
	before := peers.count(2, 4)
	remaining, err := c.ControlledShutdown(1)
	if err != nil || len(remaining) != 0 {
		t.Fatalf("ControlledShutdown(1) = %v, %v; want every partition moved", remaining, err)
	}
	e.settled(t)
	for p := int32(0); p < n; p++ {
		if st, _ := e.state(t, "t", p); st.Leader != 2 || contains(st.ISR, 1) {
			t.Fatalf("partition %d after the shutdown of 1: %+v", p, st)
		}
	}
	if got := mc.calls(); len(got) != 1 || got[0] != 1+n {
		t.Fatalf("controlled shutdown: Multi calls %v, want one of %d ops (fence and a state per partition)", got, 1+n)
	}
	if got := peers.count(2, 4) - before; got != 1 {
		t.Fatalf("broker 2 got %d LeaderAndIsr requests for the shutdown, want 1", got)
	}
}

// setCounter counts Set calls per path.
type setCounter struct {
	metastore.Store
	mu   sync.Mutex
	sets map[string]int
}

func (s *setCounter) Set(path string, data []byte, version int32) (int32, error) {
	s.mu.Lock()
	s.sets[path]++
	s.mu.Unlock()
	return s.Store.Set(path, data, version)
}

func (s *setCounter) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.sets[path]
	s.sets = map[string]int{}
	return n
}

// TestReassignmentStartIsBatched: reassigning every partition of a topic
// in one AlterPartitionReassignments writes the topic's assignment once,
// bumps the leader epochs in one fenced Multi and sends each replica's
// broker one LeaderAndIsr with every partition; when one ISR change
// notification reports every new replica in sync, the completion is
// batched the same way.
func TestReassignmentStartIsBatched(t *testing.T) {
	var mc *multiCounter
	var sc *setCounter
	e, peers := startCluster3Over(t, func(s metastore.Store) metastore.Store {
		sc = &setCounter{Store: s, sets: map[string]int{}}
		mc = &multiCounter{Store: sc}
		return mc
	})
	c := e.c
	const n = 20
	assignment := map[int32][]int32{}
	reqs := map[partition.TopicPartition][]int32{}
	for p := int32(0); p < n; p++ {
		assignment[p] = []int32{1, 2}
		reqs[partition.TopicPartition{Topic: "t", Partition: p}] = []int32{2, 1, 0}
	}
	if res := c.CreateTopics([]NewTopic{{Name: "t", NumPartitions: -1, ReplicationFactor: -1, Assignment: assignment}}, false); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	e.settled(t)
	mc.calls()
	sc.count(zkmeta.TopicPath("t"))
	before1, before2 := peers.count(1, 4), peers.count(2, 4)
	// batched: one fenced Multi of a state per partition, one LeaderAndIsr
	// to each of brokers 1 and 2 since the counts before.
	batched := func(what string, before1, before2 int) {
		t.Helper()
		if got := mc.calls(); len(got) != 1 || got[0] != 1+n {
			t.Fatalf("%s: Multi calls %v, want one of %d ops (fence and a state per partition)", what, got, 1+n)
		}
		for id, before := range map[int32]int{1: before1, 2: before2} {
			if got := peers.count(id, 4) - before; got != 1 {
				t.Fatalf("%s: broker %d got %d LeaderAndIsr requests, want 1", what, id, got)
			}
		}
	}
	errs, err := c.AlterPartitionReassignments(reqs)
	if err != nil {
		t.Fatal(err)
	}
	for p, err := range errs {
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
	}
	e.settled(t)
	if got := sc.count(zkmeta.TopicPath("t")); got != 1 {
		t.Fatalf("the topic's assignment was written %d times, want once", got)
	}
	batched("reassignment start", before1, before2)
	// Every new replica catches up: the leader (1) writes the ISRs and one
	// change notification lists all of them, as a broker batches them.
	var changed []zkmeta.IsrChangePartition
	for p := int32(0); p < n; p++ {
		st, v := e.state(t, "t", p)
		if st.LeaderEpoch != 1 {
			t.Fatalf("partition %d: leader epoch %d after phase 1, want 1", p, st.LeaderEpoch)
		}
		st.ISR = []int32{1, 2, 0}
		if _, err := e.store.Set(zkmeta.PartitionStatePath("t", p), st.Encode(), v); err != nil {
			t.Fatal(err)
		}
		changed = append(changed, zkmeta.IsrChangePartition{Topic: "t", Partition: p})
	}
	before1, before2 = peers.count(1, 4), peers.count(2, 4)
	if _, err := e.store.CreateSequential(zkmeta.IsrChangePrefix, zkmeta.EncodeIsrChange(changed), false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "every reassignment completed", func() bool {
		l, _ := c.ListPartitionReassignments(nil)
		return len(l) == 0
	})
	e.settled(t)
	if got := sc.count(zkmeta.TopicPath("t")); got != 1 {
		t.Fatalf("completion: the topic's assignment was written %d times, want once", got)
	}
	batched("completion", before1, before2)
	for p := int32(0); p < n; p++ {
		if st, _ := e.state(t, "t", p); st.Leader != 1 || st.LeaderEpoch != 2 {
			t.Fatalf("partition %d after completion: %+v, want leader 1 (kept: it is in the target) epoch 2", p, st)
		}
	}
}
