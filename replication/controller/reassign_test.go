package controller

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// recPeers records the requests the controller sends to other brokers.
type recPeers struct {
	mu   sync.Mutex
	sent map[int32][]kmsg.Request
}

func (r *recPeers) AddBroker(int32, string) {}
func (r *recPeers) RemoveBroker(int32)      {}
func (r *recPeers) Close()                  {}
func (r *recPeers) Send(id int32, req kmsg.Request, done func(kmsg.Response, error)) {
	r.mu.Lock()
	if r.sent == nil {
		r.sent = map[int32][]kmsg.Request{}
	}
	r.sent[id] = append(r.sent[id], req)
	r.mu.Unlock()
	if done != nil {
		done(nil, nil)
	}
}

func (r *recPeers) count(id int32, key int16) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.sent[id] {
		if q.Key() == key {
			n++
		}
	}
	return n
}

// startCluster3 runs broker 0's controller with brokers 1 and 2 registered
// in the same embedded store.
func startCluster3(t *testing.T) (*env, *recPeers) {
	t.Helper()
	return startCluster3Over(t, nil)
}

// startCluster3Over is startCluster3 with the controller's store wrapped
// by wrap (nil: the embedded store itself).
func startCluster3Over(t testing.TB, wrap func(metastore.Store) metastore.Store) (*env, *recPeers) {
	t.Helper()
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := zkmeta.EnsurePersistentPaths(s); err != nil {
		t.Fatal(err)
	}
	for id := int32(1); id <= 2; id++ {
		b := zkmeta.BrokerInfo{ID: id, JmxPort: -1, Timestamp: 1, Endpoints: []zkmeta.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9100 + id}}}
		if err := s.Create(zkmeta.BrokerPath(id), b.Encode(), true); err != nil {
			t.Fatal(err)
		}
	}
	rm := &fakeRM{}
	peers := &recPeers{}
	var cs metastore.Store = s
	if wrap != nil {
		cs = wrap(s)
	}
	c := New(cs, rm, testConfig(), Options{Peers: peers})
	if err := c.Start(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	e := &env{store: s, rm: rm, c: c}
	t.Cleanup(e.stop)
	return e, peers
}

func (e *env) state(t *testing.T, topic string, p int32) (zkmeta.PartitionState, int32) {
	t.Helper()
	data, v, err := e.store.Get(zkmeta.PartitionStatePath(topic, p))
	if err != nil {
		t.Fatal(err)
	}
	s, err := zkmeta.DecodePartitionState(data)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

func (e *env) topicZnode(t *testing.T, topic string) zkmeta.TopicAssignment {
	t.Helper()
	data, _, err := e.store.Get(zkmeta.TopicPath(topic))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zkmeta.DecodeTopicAssignment(topic, data)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// waitUntil polls cond (the controller reacts on its own goroutine to
// watch events) for at most 5 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReassignmentMovesReplicasAndLeader(t *testing.T) {
	e, peers := startCluster3(t)
	res := e.c.CreateTopics([]NewTopic{{Name: "t", NumPartitions: -1, ReplicationFactor: -1, Assignment: map[int32][]int32{0: {0, 1}}}}, false)
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	tp := partition.TopicPartition{Topic: "t", Partition: 0}
	errs, err := e.c.AlterPartitionReassignments(map[partition.TopicPartition][]int32{tp: {1, 2}})
	if err != nil || errs[tp] != nil {
		t.Fatalf("alter: %v %v", err, errs)
	}
	// Phase 1: RS = [1,2,0] with adding [2], removing [0]; epoch bumped,
	// the new replica 2 told to follow.
	a := e.topicZnode(t, "t")
	if !slices.Equal(a.Partitions[0], []int32{1, 2, 0}) || !slices.Equal(a.AddingReplicas[0], []int32{2}) || !slices.Equal(a.RemovingReplicas[0], []int32{0}) {
		t.Fatalf("topic znode during reassignment: %+v", a)
	}
	st, v := e.state(t, "t", 0)
	if st.Leader != 0 || st.LeaderEpoch != 1 || !slices.Equal(st.ISR, []int32{0, 1}) {
		t.Fatalf("state during reassignment: %+v", st)
	}
	if peers.count(2, 4) == 0 {
		t.Fatal("the new replica 2 got no LeaderAndIsr")
	}
	list, _ := e.c.ListPartitionReassignments(nil)
	if len(list) != 1 || !slices.Equal(list[0].Replicas, []int32{1, 2, 0}) || !slices.Equal(list[0].Adding, []int32{2}) || !slices.Equal(list[0].Removing, []int32{0}) {
		t.Fatalf("list: %+v", list)
	}
	// The leader (this broker) adds the caught-up replica 2 to the ISR;
	// the notification wakes the controller, which completes the move.
	if _, err := e.c.zk.AlterIsr(tp, 1, []int32{0, 1, 2}, v); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "reassignment completion", func() bool {
		l, _ := e.c.ListPartitionReassignments(nil)
		return len(l) == 0
	})
	st, _ = e.state(t, "t", 0)
	if st.Leader != 1 || st.LeaderEpoch != 2 || !slices.Equal(st.ISR, []int32{1, 2}) {
		t.Fatalf("final state %+v: want leader 1 (first target replica in the ISR), epoch 2, ISR [1 2]", st)
	}
	a = e.topicZnode(t, "t")
	if !slices.Equal(a.Partitions[0], []int32{1, 2}) || len(a.AddingReplicas[0]) != 0 || len(a.RemovingReplicas[0]) != 0 {
		t.Fatalf("final topic znode: %+v", a)
	}
	e.rm.mu.Lock()
	stopped, deleted := slices.Clone(e.rm.stopped), e.rm.deleted
	e.rm.mu.Unlock()
	if !slices.Contains(stopped, tp) || !deleted {
		t.Fatalf("removed local replica not stopped with deletion: %v %v", stopped, deleted)
	}
	md := e.c.Snapshot().Topics["t"].Partitions[0]
	if md.Leader != 1 || !slices.Equal(md.Replicas, []int32{1, 2}) {
		t.Fatalf("metadata: %+v", md)
	}
	// Preferred replica 1 leads already.
	got, _ := e.c.ElectLeaders(ElectPreferred, []partition.TopicPartition{tp})
	if !errors.Is(got[tp], kerr.ElectionNotNeeded) {
		t.Fatalf("preferred election: %v", got[tp])
	}
}

func TestReassignmentValidation(t *testing.T) {
	e, _ := startCluster3(t)
	e.c.CreateTopics([]NewTopic{{Name: "t", NumPartitions: -1, ReplicationFactor: -1, Assignment: map[int32][]int32{0: {0, 1}}}}, false)
	tp := func(topic string, p int32) partition.TopicPartition {
		return partition.TopicPartition{Topic: topic, Partition: p}
	}
	errs, err := e.c.AlterPartitionReassignments(map[partition.TopicPartition][]int32{
		tp("t", 5): {0}, tp("nope", 0): {0}, tp("t", 0): {1, 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if code(errs[tp("t", 5)]) != kerr.UnknownTopicOrPartition.Code || code(errs[tp("nope", 0)]) != kerr.UnknownTopicOrPartition.Code ||
		code(errs[tp("t", 0)]) != kerr.InvalidReplicaAssignment.Code {
		t.Fatalf("errors: %v", errs)
	}
	errs, _ = e.c.AlterPartitionReassignments(map[partition.TopicPartition][]int32{tp("t", 0): {0, 7}})
	if code(errs[tp("t", 0)]) != kerr.InvalidReplicaAssignment.Code {
		t.Fatalf("dead broker: %v", errs)
	}
	errs, _ = e.c.AlterPartitionReassignments(map[partition.TopicPartition][]int32{tp("t", 0): nil})
	if code(errs[tp("t", 0)]) != kerr.NoReassignmentInProgress.Code {
		t.Fatalf("cancel without reassignment: %v", errs)
	}
	// Nothing changed.
	if a := e.topicZnode(t, "t"); !slices.Equal(a.Partitions[0], []int32{0, 1}) {
		t.Fatalf("assignment changed: %v", a.Partitions)
	}
	// Cancel of a running reassignment returns to the original replicas.
	errs, _ = e.c.AlterPartitionReassignments(map[partition.TopicPartition][]int32{tp("t", 0): {0, 1, 2}})
	if errs[tp("t", 0)] != nil {
		t.Fatal(errs)
	}
	errs, _ = e.c.AlterPartitionReassignments(map[partition.TopicPartition][]int32{tp("t", 0): nil})
	if errs[tp("t", 0)] != nil {
		t.Fatalf("cancel: %v", errs)
	}
	if a := e.topicZnode(t, "t"); !slices.Equal(a.Partitions[0], []int32{0, 1}) || len(a.AddingReplicas) != 0 {
		t.Fatalf("after cancel: %+v", a)
	}
}

func TestReassignZnodeAndPreferredZnode(t *testing.T) {
	e, _ := startCluster3(t)
	e.c.CreateTopics([]NewTopic{{Name: "t", NumPartitions: -1, ReplicationFactor: -1, Assignment: map[int32][]int32{0: {1, 0}, 1: {0, 1}}}}, false)
	// Partition 0 is led by 1 (preferred); shrink it to [0] through the
	// znode, plus an entry for an unknown partition that is dropped.
	doc := Reassignment{Version: 1, Partitions: []PartitionReplicas{{Topic: "t", Partition: 0, Replicas: []int32{0}}, {Topic: "t", Partition: 9, Replicas: []int32{0}}}}
	if err := e.store.Create(zkmeta.ReassignPartitionsPath, doc.Encode(), false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "znode reassignment done and znode deleted", func() bool {
		ok, _ := e.store.Exists(zkmeta.ReassignPartitionsPath)
		if ok {
			return false
		}
		data, _, err := e.store.Get(zkmeta.TopicPath("t"))
		if err != nil {
			return false
		}
		a, _ := zkmeta.DecodeTopicAssignment("t", data)
		return slices.Equal(a.Partitions[0], []int32{0})
	})
	if st, _ := e.state(t, "t", 0); st.Leader != 0 || !slices.Equal(st.ISR, []int32{0}) {
		t.Fatalf("partition 0 after shrink: %+v", st)
	}
	// Partition 1's preferred replica 0 leads; move leadership to 1 by hand
	// and let the znode election move it back.
	st, v := e.state(t, "t", 1)
	moved := zkmeta.PartitionState{ControllerEpoch: st.ControllerEpoch, Leader: 1, LeaderEpoch: st.LeaderEpoch + 1, ISR: []int32{1, 0}}
	if _, err := e.store.Set(zkmeta.PartitionStatePath("t", 1), moved.Encode(), v); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateSequential(zkmeta.IsrChangePrefix, zkmeta.EncodeIsrChange([]zkmeta.IsrChangePartition{{Topic: "t", Partition: 1}}), false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "controller saw the moved leader", func() bool { return e.c.Snapshot().Topics["t"].Partitions[1].Leader == 1 })
	el := ElectionDocument{Partitions: []partition.TopicPartition{{Topic: "t", Partition: 1}}}
	if err := e.store.Create(zkmeta.PreferredReplicaElectionPath, el.Encode(), false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "preferred leader back", func() bool {
		ok, _ := e.store.Exists(zkmeta.PreferredReplicaElectionPath)
		return !ok && e.c.Snapshot().Topics["t"].Partitions[1].Leader == 0
	})
	if st, _ := e.state(t, "t", 1); st.LeaderEpoch != moved.LeaderEpoch+1 {
		t.Fatalf("preferred election did not bump the epoch: %+v", st)
	}
}

func TestElectionDecisions(t *testing.T) {
	e, _ := startCluster3(t)
	c := e.c
	tp := partition.TopicPartition{Topic: "t", Partition: 0}
	cases := []struct {
		typ      ElectionType
		replicas []int32
		cur      PartitionLeadership
		leader   int32
		code     int16
	}{
		{ElectPreferred, []int32{1, 0}, PartitionLeadership{Leader: 0, ISR: []int32{0, 1}}, 1, 0},
		{ElectPreferred, []int32{1, 0}, PartitionLeadership{Leader: 1, ISR: []int32{0, 1}}, 1, kerr.ElectionNotNeeded.Code},
		{ElectPreferred, []int32{1, 0}, PartitionLeadership{Leader: 0, ISR: []int32{0}}, 0, kerr.PreferredLeaderNotAvailable.Code},
		{ElectPreferred, []int32{7, 0}, PartitionLeadership{Leader: 0, ISR: []int32{0, 7}}, 0, kerr.PreferredLeaderNotAvailable.Code},
		{ElectUnclean, []int32{1, 0}, PartitionLeadership{Leader: 0, ISR: []int32{0}}, 0, kerr.ElectionNotNeeded.Code},
		{ElectUnclean, []int32{7, 2}, PartitionLeadership{Leader: -1, ISR: []int32{7}}, 2, 0},
		{ElectUnclean, []int32{7, 8}, PartitionLeadership{Leader: -1, ISR: []int32{7}}, -1, kerr.EligibleLeadersNotAvailable.Code},
	}
	for i, tc := range cases {
		var next PartitionLeadership
		var err error
		// On the actor, which owns the live brokers decideElection reads.
		if cerr := c.call(func() { next, err = c.decideElection(tc.typ, tp, tc.replicas, tc.cur) }); cerr != nil {
			t.Fatal(cerr)
		}
		if code(err) != tc.code || (err == nil && (next.Leader != tc.leader || next.LeaderEpoch != tc.cur.LeaderEpoch+1)) {
			t.Errorf("case %d: got %+v %v", i, next, err)
		}
	}
}

func TestRebalanceCandidates(t *testing.T) {
	pl := func(topic string, p, pref, leader int32) PreferredLeadership {
		return PreferredLeadership{TopicPartition: partition.TopicPartition{Topic: topic, Partition: p}, Preferred: pref, Leader: leader}
	}
	// Broker 1 should lead 4 and leads 3 (25% off); broker 2 should lead
	// 10 and leads 9 (10% off, not above 10%).
	var view []PreferredLeadership
	for p := int32(0); p < 4; p++ {
		l := int32(1)
		if p == 3 {
			l = 2
		}
		view = append(view, pl("a", p, 1, l))
	}
	for p := int32(0); p < 10; p++ {
		l := int32(2)
		if p == 0 {
			l = 1
		}
		view = append(view, pl("b", p, 2, l))
	}
	got := RebalanceCandidates(view, 10)
	if len(got) != 1 || got[0] != (partition.TopicPartition{Topic: "a", Partition: 3}) {
		t.Fatalf("candidates %v", got)
	}
	if got := RebalanceCandidates(view, 0); len(got) != 2 {
		t.Fatalf("percent 0: %v", got)
	}
}

func TestReassignmentJSON(t *testing.T) {
	r, err := DecodeReassignment([]byte(`{"version":1,"partitions":[{"topic":"b","partition":1,"replicas":[3,4]},{"topic":"a","partition":0,"replicas":[1],"log_dirs":["any"]}]}`))
	if err != nil || len(r.Partitions) != 2 {
		t.Fatal(r, err)
	}
	if got := string(r.Encode()); got != `{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":["any"]},{"topic":"b","partition":1,"replicas":[3,4]}]}` {
		t.Fatalf("encode: %s", got)
	}
	for _, bad := range []string{`{`, `{"partitions":[{"topic":"a","partition":0}]}`, `{"partitions":[{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}`} {
		if _, err := DecodeReassignment([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	d, err := DecodeElection([]byte(`{"partitions":[{"topic":"topic1","partition":1}]}`))
	if err != nil || len(d.Partitions) != 1 || d.Partitions[0].Partition != 1 {
		t.Fatal(d, err)
	}
	if got := string(d.Encode()); got != `{"version":1,"partitions":[{"topic":"topic1","partition":1}]}` {
		t.Fatal(got)
	}
}
