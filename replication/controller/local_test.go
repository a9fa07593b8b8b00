package controller

import (
	"errors"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gregor/partition"
)

// holdRM is a fakeRM whose ApplyLeaderAndIsr of a partition of topic
// held waits until release closes; entered closes when the first such
// apply begins.
type holdRM struct {
	fakeRM
	held    string
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (h *holdRM) ApplyLeaderAndIsr(states []partition.LeaderAndIsr) map[partition.TopicPartition]error {
	for _, s := range states {
		if s.Topic == h.held {
			h.once.Do(func() { close(h.entered) })
			<-h.release
			break
		}
	}
	return h.fakeRM.ApplyLeaderAndIsr(states)
}

// within fails the test unless ch delivers within 10 s (a bound on a
// broken controller, not a synchronisation: the wait ends on the event).
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer within 10 s", what)
		var zero T
		return zero
	}
}

// TestLocalApplyDoesNotHoldTheActor: while this broker's replica manager
// is held inside the LeaderAndIsr of a new topic, the controller actor
// still answers calls, publishes the topic's metadata and takes a second
// LeaderAndIsr for the same partition; CreateTopics answers only after
// the local apply (on its caller's goroutine), and the two states reach
// the replica manager in the order they were sent.
func TestLocalApplyDoesNotHoldTheActor(t *testing.T) {
	rm := &holdRM{held: "h", entered: make(chan struct{}), release: make(chan struct{})}
	e := startWith(t, t.TempDir(), testConfig(), rm)
	released := false
	defer func() {
		if !released {
			close(rm.release)
		}
	}()
	created := make(chan []CreatedTopic, 1)
	go func() {
		created <- e.c.CreateTopics([]NewTopic{{Name: "h", NumPartitions: 1, ReplicationFactor: 1}}, false)
	}()
	within(t, rm.entered, "the held apply")

	// The actor answers while the apply is held.
	answered := make(chan error, 1)
	go func() { answered <- e.c.call(func() {}) }()
	if err := within(t, answered, "a call while the local apply is held"); err != nil {
		t.Fatal(err)
	}
	if tp := e.c.Snapshot().Topics["h"]; tp == nil || len(tp.Partitions) != 1 || tp.Partitions[0].Leader != 0 {
		t.Fatalf("metadata of h while its apply is held: %+v", tp)
	}
	select {
	case res := <-created:
		t.Fatalf("CreateTopics answered %+v before this broker applied the topic", res)
	default:
	}
	// A second state for the same partition, sent while the first is held.
	sent := make(chan error, 1)
	go func() {
		sent <- e.c.call(func() {
			t := e.c.topics["h"]
			st := e.c.stateOf(t, 0)
			st.LeaderEpoch = 7
			e.c.applyLocalLeaderAndIsr([]partition.LeaderAndIsr{st})
		})
	}()
	if err := within(t, sent, "a second LeaderAndIsr while the first is held"); err != nil {
		t.Fatal(err)
	}

	close(rm.release)
	released = true
	res := within(t, created, "CreateTopics after the release")
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("CreateTopics %+v", res)
	}
	drained := make(chan bool, 1)
	go func() { drained <- e.c.waitLocal(e.c.local.last()) }()
	if !within(t, drained, "the local queue") {
		t.Fatal("the local queue did not drain")
	}
	rm.mu.Lock()
	var epochs []int32
	for _, s := range rm.applied {
		if s.Topic == "h" {
			epochs = append(epochs, s.LeaderEpoch)
		}
	}
	rm.mu.Unlock()
	if !reflect.DeepEqual(epochs, []int32{0, 7}) {
		t.Fatalf("leader epochs applied for h-0: %v, want [0 7] (in the order sent)", epochs)
	}
}

// TestStaleLocalResultDropped: a replica manager answer that comes back
// after the actor restarted or the epoch changed does not mark the
// partition failed; one from the current controller does, and the
// metadata shows it at once.
func TestStaleLocalResultDropped(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	if res := e.c.CreateTopics([]NewTopic{{Name: "s", NumPartitions: 1, ReplicationFactor: 1}}, false); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	tp := partition.TopicPartition{Topic: "s", Partition: 0}
	errs := map[partition.TopicPartition]error{tp: errors.New("log dir offline")}
	var states []partition.LeaderAndIsr
	if err := e.c.call(func() { states = []partition.LeaderAndIsr{e.c.stateOf(e.c.topics["s"], 0)} }); err != nil {
		t.Fatal(err)
	}
	for _, stale := range []localTag{{incarnation: 0, epoch: 1}, {incarnation: 1, epoch: 0}} {
		if err := e.c.call(func() { e.c.onLocalApplied(stale, states, errs) }); err != nil {
			t.Fatal(err)
		}
		if p := e.c.Snapshot().Topics["s"].Partitions[0]; p.Leader != 0 || len(p.OfflineReplicas) != 0 {
			t.Fatalf("a stale result (%+v) marked the partition: %+v", stale, p)
		}
	}
	if err := e.c.call(func() { e.c.onLocalApplied(e.c.localTag(), states, errs) }); err != nil {
		t.Fatal(err)
	}
	if p := e.c.Snapshot().Topics["s"].Partitions[0]; p.Leader != -1 || !reflect.DeepEqual(p.OfflineReplicas, []int32{0}) {
		t.Fatalf("a current failure did not mark the partition: %+v", p)
	}
	if err := e.c.call(func() { e.c.onLocalApplied(e.c.localTag(), states, nil) }); err != nil {
		t.Fatal(err)
	}
	if p := e.c.Snapshot().Topics["s"].Partitions[0]; p.Leader != 0 || len(p.OfflineReplicas) != 0 {
		t.Fatalf("a later success did not clear the mark: %+v", p)
	}
}

// TestLocalQueue: jobs run one at a time in the order queued; wait ends
// when a job is done or stop closes; close waits for the running job,
// drops the rest and refuses new ones.
func TestLocalQueue(t *testing.T) {
	q := newLocalQueue()
	q.start()
	hold := make(chan struct{})
	var mu sync.Mutex
	var order []int
	for i := 1; i <= 3; i++ {
		q.enqueue(func() {
			if i == 1 {
				<-hold
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		})
	}
	stop := make(chan struct{})
	close(stop)
	if q.wait(1, stop, time.Minute) {
		t.Fatal("wait reported a held job done")
	}
	close(hold)
	if !q.wait(3, nil, 10*time.Second) {
		t.Fatal("the jobs did not run")
	}
	mu.Lock()
	if !reflect.DeepEqual(order, []int{1, 2, 3}) {
		t.Fatalf("order %v", order)
	}
	mu.Unlock()

	hold2, ran := make(chan struct{}), make(chan struct{})
	entered := make(chan struct{})
	q.enqueue(func() { close(entered); <-hold2 })
	last := q.enqueue(func() { close(ran) })
	<-entered
	closed := make(chan struct{})
	go func() { q.close(); close(closed) }()
	// Until close has marked the queue closed, enqueue still accepts
	// (jobs that must be dropped too: the worker is held).
	var extraRan atomic.Bool
	for i := 0; q.enqueue(func() { extraRan.Store(true) }) != 0; i++ {
		if i > 1e6 {
			t.Fatal("close did not mark the queue closed")
		}
		runtime.Gosched()
	}
	close(hold2)
	within(t, closed, "close")
	select {
	case <-ran:
		t.Fatal("a job queued behind the running one ran after close")
	default:
	}
	if extraRan.Load() {
		t.Fatal("a job queued before close ran after it")
	}
	if !q.wait(last, nil, time.Second) {
		t.Fatal("wait on a dropped job did not end")
	}
}
