package controller

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// holdStore is a store whose first matching call is held until the test
// releases it: Multi when it writes a state of holdTopic, Get of holdPath.
// It logs, in order, the partition state znodes Multi creates and the
// reads of broker 1's registration.
type holdStore struct {
	metastore.Store
	holdTopic string
	holdPath  string

	mu      sync.Mutex
	held    bool
	entered chan struct{} // closed when the held call arrived
	release chan struct{} // closed by the test
	log     []string      // "state <path>" per state created, "read <path>" per read of broker 1
}

func newHoldStore(s metastore.Store) *holdStore {
	return &holdStore{Store: s, entered: make(chan struct{}), release: make(chan struct{})}
}

// hold blocks the caller if it is the first matching call.
func (h *holdStore) hold(match bool) {
	if !match {
		return
	}
	h.mu.Lock()
	first := !h.held
	h.held = true
	h.mu.Unlock()
	if first {
		close(h.entered)
		<-h.release
	}
}

func (h *holdStore) Multi(ops ...metastore.Op) ([]metastore.OpResult, error) {
	match := false
	for _, op := range ops {
		if c, ok := op.(*metastore.CreateOp); ok && h.holdTopic != "" && strings.HasPrefix(c.Path, zkmeta.PartitionsPath(h.holdTopic)+"/") {
			match = true
		}
	}
	h.hold(match)
	res, err := h.Store.Multi(ops...)
	if err == nil {
		h.mu.Lock()
		for _, op := range ops {
			if c, ok := op.(*metastore.CreateOp); ok && strings.HasSuffix(c.Path, "/state") {
				h.log = append(h.log, "state "+c.Path)
			}
		}
		h.mu.Unlock()
	}
	return res, err
}

func (h *holdStore) Get(path string) ([]byte, int32, error) {
	h.hold(h.holdPath != "" && path == h.holdPath)
	if path == zkmeta.BrokerPath(1) {
		h.mu.Lock()
		h.log = append(h.log, "read "+path)
		h.mu.Unlock()
	}
	return h.Store.Get(path)
}

func (h *holdStore) logged() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

// startHeld starts a single-node controller over h (wrapping an embedded
// store) in a system the test can inject faults into.
func startHeld(t *testing.T, configure func(h *holdStore)) (*env, *holdStore, *actors.Instruments) {
	t.Helper()
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := newHoldStore(s)
	configure(h)
	sys := actors.NewSystem(nil)
	rm := &fakeRM{}
	c := New(h, rm, testConfig(), Options{System: sys})
	if err := c.Start(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	e := &env{store: s, rm: rm, c: c}
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release) // a failed test must not leave Close waiting for the held call
		}
		e.stop()
		sys.Shutdown()
	})
	return e, h, actors.InstrumentsOf(sys)
}

// queueSize asks the actor for EventQueueSize within a bounded wait.
func queueSize(t *testing.T, c *Controller) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := c.EventQueueSize(ctx)
	if err != nil {
		t.Fatalf("the controller actor did not answer while an event waited off the actor: %v", err)
	}
	return n
}

// TestActorAnswersWhileStoreHeld: while the partition state Multi of a
// CreateTopics is held inside the store, the controller actor still
// answers (EventQueueSize, within 2 s) and queues what arrives: a second
// CreateTopics and a broker registering (a /brokers/ids watch event)
// wait behind the held one, and nothing of theirs is done meanwhile. Released, the held create completes, then the queued items
// run in arrival order.
func TestActorAnswersWhileStoreHeld(t *testing.T) {
	e, h, _ := startHeld(t, func(h *holdStore) { h.holdTopic = "t" })
	first := make(chan []CreatedTopic, 1)
	go func() {
		first <- e.c.CreateTopics([]NewTopic{{Name: "t", NumPartitions: 1, ReplicationFactor: 1}}, false)
	}()
	select {
	case <-h.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the create never wrote its partition states")
	}
	// The create's own write of /brokers/topics/t fired the topics watch:
	// that event is queued (watch events arrive asynchronously).
	const base = 1
	waitFor(t, "the topics watch event queued", func() bool { return queueSize(t, e.c) == base })
	second := make(chan []CreatedTopic, 1)
	go func() {
		second <- e.c.CreateTopics([]NewTopic{{Name: "u", NumPartitions: 1, ReplicationFactor: 1}}, false)
	}()
	waitFor(t, "the second create queued", func() bool { return queueSize(t, e.c) == base+1 })
	b1 := zkmeta.BrokerInfo{ID: 1, JmxPort: -1, Timestamp: time.Now().UnixMilli(),
		Endpoints: []zkmeta.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 1}}}
	if err := e.store.Create(zkmeta.BrokerPath(1), b1.Encode(), false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the broker change queued", func() bool { return queueSize(t, e.c) == base+2 })
	if ok, _ := e.store.Exists(zkmeta.TopicPath("u")); ok || len(h.logged()) != 0 {
		t.Fatalf("queued work ran while the held create waited: u created %v, log %v", ok, h.logged())
	}
	select {
	case <-first:
		t.Fatal("the held create answered before its write landed")
	default:
	}

	close(h.release)
	for name, ch := range map[string]chan []CreatedTopic{"t": first, "u": second} {
		select {
		case res := <-ch:
			if res[0].Err != nil {
				t.Fatalf("create %s: %v", name, res[0].Err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("create %s never answered after the release", name)
		}
	}
	waitFor(t, "broker 1 in the metadata", func() bool { return len(e.c.Snapshot().Brokers) == 2 })
	want := []string{"state " + zkmeta.PartitionStatePath("t", 0), "state " + zkmeta.PartitionStatePath("u", 0), "read " + zkmeta.BrokerPath(1)}
	if got := h.logged(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the controller did, in order, %v; want %v", got, want)
	}
	if n := queueSize(t, e.c); n != 0 {
		t.Fatalf("queue after the release: %d", n)
	}
	for _, n := range []string{"t", "u"} {
		if tp := e.c.Snapshot().Topics[n]; tp == nil || tp.Partitions[0].Leader != 0 {
			t.Fatalf("metadata of %s: %+v", n, tp)
		}
	}
}

// TestStaleResultChangesNothing: a request whose store read is held when
// the controller actor restarts (a new incarnation: it takes over again
// with the next controller epoch, without waiting for the held read) is
// abandoned: when the read returns, the rest of the request never runs,
// its caller gets NOT_CONTROLLER, and the controller's state is what the
// new incarnation read. Later requests work.
func TestStaleResultChangesNothing(t *testing.T) {
	const held = "/held"
	e, h, in := startHeld(t, func(h *holdStore) { h.holdPath = held })
	if err := e.store.Create(held, []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	var continued atomic.Bool
	answered := make(chan error, 1)
	go func() {
		answered <- e.c.call(func() {
			if _, _, err := e.c.meta.Get(held); err != nil {
				return
			}
			continued.Store(true)
			e.c.topics["stale"] = &topicState{name: "stale", assignment: map[int32][]int32{0: {0}}, state: map[int32]*partState{}}
			e.c.publish()
		})
	}()
	select {
	case <-h.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the request never read the held path")
	}
	if _, err := in.Inject(actors.ActorFault{Action: actors.FaultKill, Actor: ActorName}); err != nil {
		t.Fatal(err)
	}
	// The new incarnation re-elects itself while the old read is held.
	waitFor(t, "taken over again with epoch 2", func() bool { return e.c.Epoch() == 2 && e.c.ActiveEpoch() == 2 })
	if n := queueSize(t, e.c); n != 0 {
		t.Fatalf("queue after the takeover: %d", n)
	}

	close(h.release)
	select {
	case err := <-answered:
		if !errors.Is(err, kerr.NotController) {
			t.Fatalf("the abandoned request answered %v, want NOT_CONTROLLER", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned request never answered")
	}
	if continued.Load() {
		t.Fatal("the request continued after a result of the old incarnation")
	}
	if res := e.c.CreateTopics([]NewTopic{{Name: "after", NumPartitions: 1, ReplicationFactor: 1}}, false); res[0].Err != nil {
		t.Fatalf("create after the restart: %v", res[0].Err)
	}
	var hasStale bool
	if err := e.c.call(func() { _, hasStale = e.c.topics["stale"] }); err != nil {
		t.Fatal(err)
	}
	if snap := e.c.Snapshot(); hasStale || snap.Topics["stale"] != nil || snap.Topics["after"] == nil || e.c.Epoch() != 2 {
		t.Fatalf("after the stale result: stale in state %v, snapshot topics %v, epoch %d", hasStale, snap.Topics, e.c.Epoch())
	}
}

// BenchmarkEffect measures one metastore read made by a controller event
// (an effect: the turn handed to the I/O and back through the actor's
// mailbox) against the same read made directly.
func BenchmarkEffect(b *testing.B) {
	s, err := metastore.OpenEmbeddedDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	c := New(s, &fakeRM{}, testConfig(), Options{})
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close(); s.Close() })
	const reads = 1000
	b.Run("event", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := c.call(func() {
				for j := 0; j < reads; j++ {
					c.meta.Get(zkmeta.ControllerPath)
				}
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*reads), "ns/read")
	})
	b.Run("direct", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for j := 0; j < reads; j++ {
				s.Get(zkmeta.ControllerPath)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*reads), "ns/read")
	})
}

// BenchmarkCreateTopic measures a CreateTopics of 1000 partitions through
// the controller over the in-memory store (so the controller's own cost
// shows, not the embedded store's persistence): each partition's state is
// written in batched Multis, every store call an effect.
func BenchmarkCreateTopic(b *testing.B) {
	m := metastore.NewMemory()
	s := m.Open()
	c := New(s, &fakeRM{}, testConfig(), Options{})
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close(); s.Close() })
	for i := 0; i < b.N; i++ {
		res := c.CreateTopics([]NewTopic{{Name: "bench-" + strconv.Itoa(i), NumPartitions: 1000, ReplicationFactor: 1}}, false)
		if res[0].Err != nil {
			b.Fatal(res[0].Err)
		}
	}
}

// TestDeleteWaitsForLocalStopOffActor: a topic deletion waits for this
// broker's StopReplica (its marker stays if the stop fails), but not on
// the actor: while the replica manager holds the stop, the actor answers
// and queues a CreateTopics behind the deletion, which runs after it.
func TestDeleteWaitsForLocalStopOffActor(t *testing.T) {
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rm := &fakeRM{stopGate: make(chan struct{}), stopEntered: make(chan struct{}, 1)}
	c := New(s, rm, testConfig(), Options{})
	if err := c.Start(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			close(rm.stopGate)
		}
	}
	t.Cleanup(func() { release(); c.Close(); s.Close() })
	if res := c.CreateTopics([]NewTopic{{Name: "gone", NumPartitions: 2, ReplicationFactor: 1}}, false); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	deleted := make(chan []error, 1)
	go func() { deleted <- c.DeleteTopics([]string{"gone"}) }()
	select {
	case <-rm.stopEntered:
	case <-time.After(5 * time.Second):
		t.Fatal("the deletion never stopped the local replicas")
	}
	// The deletion marker fired the /admin/delete_topics watch: that
	// event is queued behind the deletion (it arrives asynchronously).
	const base = 1
	waitFor(t, "the deletions watch event queued", func() bool { return queueSize(t, c) == base })
	created := make(chan []CreatedTopic, 1)
	go func() {
		created <- c.CreateTopics([]NewTopic{{Name: "next", NumPartitions: 1, ReplicationFactor: 1}}, false)
	}()
	waitFor(t, "the create queued behind the deletion", func() bool { return queueSize(t, c) == base+1 })
	if ok, _ := s.Exists(zkmeta.TopicPath("gone")); !ok {
		t.Fatal("the topic's znodes went before its local replicas stopped")
	}
	release()
	select {
	case errs := <-deleted:
		if errs[0] != nil {
			t.Fatalf("delete: %v", errs[0])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the deletion never finished")
	}
	select {
	case res := <-created:
		if res[0].Err != nil {
			t.Fatalf("create after the deletion: %v", res[0].Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the queued create never ran")
	}
	if ok, _ := s.Exists(zkmeta.TopicPath("gone")); ok {
		t.Fatal("the deleted topic's znode is still there")
	}
	if ok, _ := s.Exists(zkmeta.DeleteTopicPath("gone")); ok {
		t.Fatal("the deletion marker is still there")
	}
	if snap := c.Snapshot(); snap.Topics["gone"] != nil || snap.Topics["next"] == nil {
		t.Fatalf("topics after: %v", snap.Topics)
	}
}

// TestCloseAbandonsHeldEvent: Close while a request waits for the store
// answers its caller NOT_CONTROLLER at once; Close itself returns once
// the store call does (it owns the goroutine making it), and the request
// never continues.
func TestCloseAbandonsHeldEvent(t *testing.T) {
	const held = "/held"
	e, h, _ := startHeld(t, func(h *holdStore) { h.holdPath = held })
	var continued atomic.Bool
	answered := make(chan error, 1)
	go func() {
		answered <- e.c.call(func() {
			e.c.meta.Get(held)
			continued.Store(true)
		})
	}()
	select {
	case <-h.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the request never read the held path")
	}
	closed := make(chan struct{})
	go func() { e.c.Close(); close(closed) }()
	select {
	case err := <-answered:
		if !errors.Is(err, kerr.NotController) {
			t.Fatalf("request during Close answered %v, want NOT_CONTROLLER", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request's caller waited for the held store call")
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a goroutine it owns was still in the store")
	default:
	}
	close(h.release)
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close never returned after the store call did")
	}
	if continued.Load() {
		t.Fatal("the request continued after Close")
	}
}
