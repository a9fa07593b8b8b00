package txncoordinator

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/actors/coordinator"
	"gregor/storage/record"
)

// fakeMarkers is an in-process marker target: it records every marker it
// is sent and answers with the code set per partition (0 by default).
type fakeMarkers struct {
	mu       sync.Mutex
	codes    map[TopicPartition]int16
	leaders  map[TopicPartition]int32 // missing: leader 1
	gone     map[TopicPartition]bool
	got      []kmsg.WriteTxnMarkersRequestMarker
	requests int
}

func newFakeMarkers() *fakeMarkers {
	return &fakeMarkers{codes: map[TopicPartition]int16{}, leaders: map[TopicPartition]int32{}, gone: map[TopicPartition]bool{}}
}

func (f *fakeMarkers) Leader(tp TopicPartition) (int32, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone[tp] {
		return -1, false
	}
	if l, ok := f.leaders[tp]; ok {
		return l, true
	}
	return 1, true
}

func (f *fakeMarkers) Send(_ context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	f.requests++
	for _, mk := range req.Markers {
		f.got = append(f.got, mk)
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = mk.ProducerID
		for _, t := range mk.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				tp := TopicPartition{t.Topic, p}
				rp.ErrorCode = f.codes[tp]
				delete(f.codes, tp) // one failure, then success
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp, nil
}

func (f *fakeMarkers) markers() []kmsg.WriteTxnMarkersRequestMarker {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]kmsg.WriteTxnMarkersRequestMarker(nil), f.got...)
}

type fakeIDs struct{ n atomic.Int64 }

func (f *fakeIDs) NextProducerID() (int64, error) { return 1000 + f.n.Add(1), nil }

type env struct {
	t       *testing.T
	c       *Coordinator
	topic   *coordinator.MemTopic
	markers *fakeMarkers
}

func startEnv(t *testing.T, tweak func(*Options)) *env {
	t.Helper()
	sys := actors.NewSystem(zap.NewNop())
	e := &env{t: t, topic: coordinator.NewMemTopic(), markers: newFakeMarkers()}
	opts := Options{Partitions: 4, Topic: e.topic, Markers: e.markers, IDs: &fakeIDs{}, RetryBackoff: 5 * time.Millisecond, RequestTimeout: 10 * time.Second}
	if tweak != nil {
		tweak(&opts)
	}
	c, err := New(sys, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	t.Cleanup(func() { c.Stop(); sys.Shutdown() })
	return e
}

// await polls cond (an event this package publishes no channel for) with
// a bound.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (e *env) init(id string, timeout int32, pid int64, epoch int16) (int64, int16, int16) {
	e.t.Helper()
	type r struct {
		p    int64
		e    int16
		code int16
	}
	ch := make(chan r, 1)
	e.c.InitProducerID(id, timeout, pid, epoch, func(p int64, ep int16, code int16) { ch <- r{p, ep, code} })
	select {
	case v := <-ch:
		return v.p, v.e, v.code
	case <-time.After(5 * time.Second):
		e.t.Fatal("InitProducerID not answered")
	}
	return 0, 0, 0
}

func (e *env) code(f func(reply func(int16))) int16 {
	e.t.Helper()
	ch := make(chan int16, 1)
	f(func(c int16) { ch <- c })
	select {
	case c := <-ch:
		return c
	case <-time.After(5 * time.Second):
		e.t.Fatal("not answered")
	}
	return 0
}

// initLoaded elects the id's partition and retries InitProducerId while it
// loads.
func (e *env) initLoaded(id string) (int64, int16) {
	e.t.Helper()
	e.c.LeadershipChanged(e.c.PartitionFor(id), true, 5)
	var pid int64
	var epoch int16
	await(e.t, "load", func() bool {
		var code int16
		pid, epoch, code = e.init(id, 60000, -1, -1)
		if code != 0 && code != kerr.CoordinatorLoadInProgress.Code {
			e.t.Fatalf("init: %v", kerr.ErrorForCode(code))
		}
		return code == 0
	})
	return pid, epoch
}

func TestActorNotCoordinatorAndLoading(t *testing.T) {
	e := startEnv(t, nil)
	if _, _, code := e.init("t1", 60000, -1, -1); code != kerr.NotCoordinator.Code {
		t.Fatalf("not loaded: %v", kerr.ErrorForCode(code))
	}
	// Checked before the coordinator is looked up, as Kafka does.
	if _, _, code := e.init("t1", 15*60000+1, -1, -1); code != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("timeout too large: %v", kerr.ErrorForCode(code))
	}
	if _, _, code := e.init("", 1000, -1, -1); code != kerr.InvalidRequest.Code {
		t.Fatalf("empty id: %v", kerr.ErrorForCode(code))
	}
	release := e.topic.HoldLoads()
	p := e.c.PartitionFor("t1")
	e.c.LeadershipChanged(p, true, 5)
	await(t, "the load to start", func() bool { return e.topic.Held() == 1 })
	if _, _, code := e.init("t1", 60000, -1, -1); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("loading: %v", kerr.ErrorForCode(code))
	}
	release()
	await(t, "loaded", func() bool { _, _, code := e.init("t1", 60000, -1, -1); return code == 0 })
	// Resigned: NOT_COORDINATOR again; a stale election is ignored.
	e.c.LeadershipChanged(p, false, 6)
	await(t, "unload", func() bool { _, _, code := e.init("t1", 60000, -1, -1); return code == kerr.NotCoordinator.Code })
	e.c.LeadershipChanged(p, true, 5)
	if _, _, code := e.init("t1", 60000, -1, -1); code != kerr.NotCoordinator.Code {
		t.Fatalf("after stale election: %v", kerr.ErrorForCode(code))
	}
}

func TestActorCommitWritesMarkersAndCompletes(t *testing.T) {
	e := startEnv(t, nil)
	pid, epoch := e.initLoaded("t1")
	if pid != 1001 || epoch != 0 {
		t.Fatalf("init = %d/%d", pid, epoch)
	}
	e.markers.codes[TopicPartition{"out", 1}] = kerr.NotLeaderForPartition.Code // first marker refused: retried
	if code := e.code(func(r func(int16)) {
		e.c.AddPartitions("t1", pid, epoch, map[string][]int32{"out": {0, 1}}, r)
	}); code != 0 {
		t.Fatalf("add: %v", kerr.ErrorForCode(code))
	}
	if code := e.code(func(r func(int16)) { e.c.EndTxn("t1", pid, epoch, true, r) }); code != 0 {
		t.Fatalf("end: %v", kerr.ErrorForCode(code))
	}
	p := e.c.PartitionFor("t1")
	await(t, "CompleteCommit in the log", func() bool {
		recs := e.topic.Records(p)
		if len(recs) == 0 {
			return false
		}
		last := recs[len(recs)-1]
		m, err := DecodeValue("t1", last.Value)
		return err == nil && m.State == CompleteCommit
	})
	var states []State
	for _, r := range e.topic.Records(p) {
		m, err := DecodeValue("t1", r.Value)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, m.State)
	}
	want := []State{Empty, Ongoing, PrepareCommit, CompleteCommit}
	if len(states) != len(want) {
		t.Fatalf("records %v, want %v", states, want)
	}
	for i := range want {
		if states[i] != want[i] {
			t.Fatalf("records %v, want %v", states, want)
		}
	}
	ms := e.markers.markers()
	// out-0 and out-1 in one request, then out-1 again.
	if len(ms) != 2 || !ms[0].Committed || ms[0].ProducerID != pid || ms[0].CoordinatorEpoch != 5 || len(ms[1].Topics[0].Partitions) != 1 || ms[1].Topics[0].Partitions[0] != 1 {
		t.Fatalf("markers %+v", ms)
	}
	// The next transaction is accepted at once.
	if code := e.code(func(r func(int16)) { e.c.AddPartitions("t1", pid, epoch, map[string][]int32{"out": {0}}, r) }); code != 0 {
		t.Fatalf("next add: %v", kerr.ErrorForCode(code))
	}
}

func TestActorRestartReloadsAndCompletes(t *testing.T) {
	e := startEnv(t, nil)
	pid, epoch := e.initLoaded("t1")
	e.code(func(r func(int16)) { e.c.AddPartitions("t1", pid, epoch, map[string][]int32{"out": {0}}, r) })
	// Markers fail until the broker "comes back": the transaction is left
	// in PrepareAbort when the actor is killed.
	e.markers.mu.Lock()
	e.markers.leaders[TopicPartition{"out", 0}] = -1
	e.markers.mu.Unlock()
	if code := e.code(func(r func(int16)) { e.c.EndTxn("t1", pid, epoch, false, r) }); code != 0 {
		t.Fatalf("abort: %v", kerr.ErrorForCode(code))
	}
	in := actors.InstrumentsOf(e.c.sys)
	var path string
	for _, a := range in.Actors() {
		if a.Kind == "txn" {
			path = a.Path
		}
	}
	if path == "" {
		t.Fatalf("no actor of kind txn in %+v", in.Actors())
	}
	if _, err := in.Inject(actors.ActorFault{Action: actors.FaultKill, Actor: path}); err != nil {
		t.Fatal(err)
	}
	await(t, "the restart", func() bool { a, ok := in.Actor(path); return ok && a.Restarts == 1 })
	e.markers.mu.Lock()
	delete(e.markers.leaders, TopicPartition{"out", 0})
	e.markers.mu.Unlock()
	p := e.c.PartitionFor("t1")
	await(t, "CompleteAbort after reload", func() bool {
		recs := e.topic.Records(p)
		m, err := DecodeValue("t1", recs[len(recs)-1].Value)
		return err == nil && m.State == CompleteAbort
	})
	// The reloaded coordinator knows the producer: its next epoch.
	if _, ep, code := e.init("t1", 60000, -1, -1); code != 0 || ep != 1 {
		t.Fatalf("init after reload: %d %v", ep, kerr.ErrorForCode(code))
	}
}

func TestActorAbortsTimedOutTransaction(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Now().UnixMilli())
	e := startEnv(t, func(o *Options) {
		o.AbortInterval = 5 * time.Millisecond
		o.Now = func() time.Time { return time.UnixMilli(now.Load()) }
	})
	pid, epoch := e.initLoaded("t1")
	e.code(func(r func(int16)) { e.c.AddPartitions("t1", pid, epoch, map[string][]int32{"out": {0}}, r) })
	now.Add(60001) // past the 60 s timeout
	p := e.c.PartitionFor("t1")
	await(t, "the abort", func() bool {
		recs := e.topic.Records(p)
		m, err := DecodeValue("t1", recs[len(recs)-1].Value)
		return err == nil && m.State == CompleteAbort && m.ProducerEpoch == epoch+1
	})
	if code := e.code(func(r func(int16)) { e.c.EndTxn("t1", pid, epoch, true, r) }); code != kerr.ProducerFenced.Code {
		t.Fatalf("zombie commit: %v", kerr.ErrorForCode(code))
	}
	ms := e.markers.markers()
	if len(ms) != 1 || ms[0].Committed || ms[0].ProducerEpoch != epoch+1 {
		t.Fatalf("abort markers %+v", ms)
	}
}

func TestActorVerifyAndGroupPartition(t *testing.T) {
	e := startEnv(t, func(o *Options) { o.GroupPartitions = 50 })
	pid, epoch := e.initLoaded("t1")
	gp := e.c.GroupPartition("g1")
	if gp != coordinator.PartitionFor("g1", 50) {
		t.Fatalf("group partition %d", gp)
	}
	e.code(func(r func(int16)) {
		e.c.AddPartitions("t1", pid, epoch, map[string][]int32{"__consumer_offsets": {gp}}, r)
	})
	ch := make(chan map[string]map[int32]int16, 1)
	e.c.VerifyPartitions("t1", pid, epoch, map[string][]int32{"__consumer_offsets": {gp}, "x": {0}}, func(m map[string]map[int32]int16) { ch <- m })
	got := <-ch
	if got["__consumer_offsets"][gp] != 0 || got["x"][0] != kerr.TransactionAbortable.Code {
		t.Fatalf("verify %v", got)
	}
}

// stubbornTopic is a MemTopic whose held appends land even when their
// caller has given up (as partition.ProduceWait once the partition actor
// has started the append).
type stubbornTopic struct {
	*coordinator.MemTopic
	mu   sync.Mutex
	gate chan struct{}
}

func (s *stubbornTopic) Append(ctx context.Context, p int32, batch []byte) (int64, error) {
	s.mu.Lock()
	g := s.gate
	s.mu.Unlock()
	if g != nil {
		<-g
	}
	return s.MemTopic.Append(context.Background(), p, batch)
}

// TestActorReloadWaitsForEarlierAppends: an append of the incarnation that
// crashed lands after the crash; the restarted actor reads the log only
// once it has, so its state is the log's (Ongoing with the partition).
func TestActorReloadWaitsForEarlierAppends(t *testing.T) {
	st := &stubbornTopic{MemTopic: coordinator.NewMemTopic()}
	e := startEnv(t, func(o *Options) { o.Topic = st })
	e.topic = st.MemTopic
	// Runs before the coordinator's Stop: a held append must not outlive
	// a failed test.
	t.Cleanup(func() {
		st.mu.Lock()
		if st.gate != nil {
			close(st.gate)
			st.gate = nil
		}
		st.mu.Unlock()
	})
	pid, epoch := e.initLoaded("t1")
	st.mu.Lock()
	st.gate = make(chan struct{})
	st.mu.Unlock()
	added := make(chan int16, 1)
	e.c.AddPartitions("t1", pid, epoch, map[string][]int32{"out": {0}}, func(c int16) { added <- c })
	in := actors.InstrumentsOf(e.c.sys)
	var path string
	for _, a := range in.Actors() {
		if a.Kind == "txn" {
			path = a.Path
		}
	}
	// Kill it once the append is in flight (the request was handled).
	await(t, "the append to start", func() bool {
		return len(e.topic.Records(e.c.PartitionFor("t1"))) == 1 && e.c.appends(e.c.PartitionFor("t1")).count() == 1
	})
	if _, err := in.Inject(actors.ActorFault{Action: actors.FaultKill, Actor: path}); err != nil {
		t.Fatal(err)
	}
	if code := <-added; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("add in flight at the crash: %v", kerr.ErrorForCode(code))
	}
	await(t, "the restart", func() bool { a, ok := in.Actor(path); return ok && a.Restarts == 1 })
	if _, _, code := e.init("t1", 60000, -1, -1); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("init while an earlier append is in flight: %v", kerr.ErrorForCode(code))
	}
	st.mu.Lock()
	close(st.gate)
	st.gate = nil
	st.mu.Unlock()
	desc := make(chan Description, 1)
	await(t, "the reload", func() bool {
		ok := make(chan bool, 1)
		e.c.send(&txnRequest{partition: e.c.PartitionFor("t1"), fail: func(int16) { ok <- false }, apply: func(c *Core, _ int64) {
			d, found := c.Describe("t1")
			if found {
				desc <- d
			}
			ok <- found
		}})
		return <-ok
	})
	if d := <-desc; d.State != Ongoing || len(d.Partitions) != 1 || d.Partitions[0] != (TopicPartition{"out", 0}) {
		t.Fatalf("reloaded %+v, want the append that landed after the crash", d)
	}
}

// TestActorPanicAnswersTheRequest: a request whose handling panics is
// answered COORDINATOR_NOT_AVAILABLE at once (not after RequestTimeout)
// and the restarted actor serves the next one.
func TestActorPanicAnswersTheRequest(t *testing.T) {
	e := startEnv(t, nil)
	e.initLoaded("t1")
	got := make(chan int16, 1)
	e.c.send(&txnRequest{partition: e.c.PartitionFor("t1"), api: "test", fail: func(c int16) { got <- c },
		apply: func(*Core, int64) { panic("boom") }})
	select {
	case c := <-got:
		if c != kerr.CoordinatorNotAvailable.Code {
			t.Fatalf("answered %v", kerr.ErrorForCode(c))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request that panicked was not answered")
	}
	await(t, "the reload", func() bool { _, ep, code := e.init("t1", 60000, -1, -1); return code == 0 && ep == 1 })
}

// TestActorLoadBatchesMarkersPerBroker: two transactions found prepared
// when a partition loads get their markers in one WriteTxnMarkers to
// their common leader (a marker each), and both complete.
func TestActorLoadBatchesMarkersPerBroker(t *testing.T) {
	e := startEnv(t, nil)
	// Two transactional ids of one partition.
	ids := []string{"a"}
	for i := 0; len(ids) < 2; i++ {
		if id := fmt.Sprintf("b%d", i); e.c.PartitionFor(id) == e.c.PartitionFor("a") {
			ids = append(ids, id)
		}
	}
	p := e.c.PartitionFor("a")
	var recs []record.BatchRecord
	for i, id := range ids {
		tr := Transit{ProducerID: int64(100 + i), ProducerEpoch: 3, TimeoutMs: 60000, State: PrepareCommit,
			Partitions: []TopicPartition{{"out", int32(i)}}, StartTimestamp: 10, UpdateTimestamp: 20}
		recs = append(recs, record.BatchRecord{Key: Key(id), Value: Value(tr)})
	}
	b, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.topic.Append(context.Background(), p, b); err != nil {
		t.Fatal(err)
	}
	e.c.LeadershipChanged(p, true, 8)
	await(t, "both completed", func() bool {
		done := 0
		for _, r := range e.topic.Records(p) {
			if m, err := DecodeValue("", r.Value); err == nil && m.State == CompleteCommit {
				done++
			}
		}
		return done == 2
	})
	e.markers.mu.Lock()
	defer e.markers.mu.Unlock()
	if e.markers.requests != 1 || len(e.markers.got) != 2 || e.markers.got[0].CoordinatorEpoch != 8 || e.markers.got[0].ProducerEpoch != 3 {
		t.Fatalf("%d requests carrying %+v, want one with both markers", e.markers.requests, e.markers.got)
	}
}

// TestTransactionalIDOverProtocolLimit: an id longer than a protocol
// string can be (32767 bytes; TransactionLogKey's int16 length) is refused
// INVALID_REQUEST before anything is written — it used to be accepted and
// its key written with the length wrapped, loading as another id (found by
// review); an id of exactly the limit is served and its key round-trips.
func TestTransactionalIDOverProtocolLimit(t *testing.T) {
	e := startEnv(t, nil)
	if _, _, code := e.init(strings.Repeat("y", MaxTransactionalIDBytes+1), 60000, -1, -1); code != kerr.InvalidRequest.Code {
		t.Fatalf("InitProducerId with a %d-byte id: %v, want INVALID_REQUEST", MaxTransactionalIDBytes+1, kerr.ErrorForCode(code))
	}
	id := strings.Repeat("y", MaxTransactionalIDBytes)
	if got, ok, err := DecodeKey(Key(id)); err != nil || !ok || got != id {
		t.Fatalf("the key of a %d-byte id decodes to %d bytes (ok %v, err %v)", len(id), len(got), ok, err)
	}
	if pid, _ := e.initLoaded(id); pid < 0 {
		t.Fatalf("InitProducerId with a %d-byte id: producer id %d", len(id), pid)
	}
}
