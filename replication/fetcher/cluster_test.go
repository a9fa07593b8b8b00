package fetcher

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"gregor/actors"
	"gregor/config"
	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
	"gregor/wire"
	"gregor/wire/handlers"
	"gregor/wire/server"
)

// testBroker is one in-process broker: storage, replica manager, fetcher
// manager, handlers and a protocol server on a loopback port.
type testBroker struct {
	id      int32
	logs    *storage.LogManager
	sys     *actor.ActorSystem
	rm      *partition.Manager
	fm      *Manager
	srv     *server.Server
	port    int32
	client  *kgo.Client // acks=-1 (kgo sets a raw ProduceRequest's Acks from its config)
	client1 *kgo.Client // acks=1
	stopped bool
	fmDone  bool
	gate    *gate
}

// gate wraps a broker's handlers: requests of the API key in silent get
// no answer (as from a leader that hangs), and are announced on stuck.
type gate struct {
	wire.Dispatcher
	silent atomic.Int32 // API key + 1; 0: answer everything
	stuck  chan int16
	// fetches, when set, receives the follower Fetch requests served (a
	// full channel drops them).
	fetches chan *kmsg.FetchRequest
}

func (g *gate) Handle(rc *wire.RequestContext, req kmsg.Request) wire.Reply {
	if f, ok := req.(*kmsg.FetchRequest); ok && g.fetches != nil && f.ReplicaID >= 0 {
		select {
		case g.fetches <- f:
		default:
		}
	}
	if k := g.silent.Load(); k != 0 && int16(k-1) == req.Key() {
		select {
		case g.stuck <- req.Key():
		default:
		}
		return wire.Later(make(chan wire.Response)) // never answered; the connection's close ends it
	}
	return g.Dispatcher.Handle(rc, req)
}

func (b *testBroker) closeFetchers() {
	if !b.fmDone {
		b.fmDone = true
		b.fm.Close()
	}
}

// fakeIsr stands in for the controller's partition-state znode: it keeps
// a version per partition and refuses stale ones (as ZooKeeper's
// conditional set would).
type fakeIsr struct {
	mu      sync.Mutex
	version map[partition.TopicPartition]int32
	isr     map[partition.TopicPartition][]int32
	calls   int
}

func (f *fakeIsr) AlterIsr(tp partition.TopicPartition, _ int32, newIsr []int32, zkVersion int32) (int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.version[tp] != zkVersion {
		return 0, fmt.Errorf("bad version %d, znode at %d", zkVersion, f.version[tp])
	}
	f.version[tp]++
	f.isr[tp] = slices.Clone(newIsr)
	return f.version[tp], nil
}

func (f *fakeIsr) get(tp partition.TopicPartition) ([]int32, int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.isr[tp]), f.version[tp]
}

type endpoints struct {
	mu sync.Mutex
	m  map[int32]int32
}

func (e *endpoints) BrokerEndpoint(id int32) (string, int32, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.m[id]
	return "127.0.0.1", p, ok
}

type cluster struct {
	t       testing.TB
	isr     *fakeIsr
	eps     *endpoints
	brokers map[int32]*testBroker
	dirs    map[int32]string
	lag     time.Duration
	// fetchCfg, when set, replaces the fetchers' test config.
	fetchCfg *Config
}

func newCluster(t testing.TB, ids ...int32) *cluster { return newClusterWith(t, nil, ids...) }

// newClusterWith is newCluster whose fetchers run with fc (nil: the
// test default) and whose leaders report follower Fetch requests on their
// gate's fetches channel.
func newClusterWith(t testing.TB, fc *Config, ids ...int32) *cluster {
	c := &cluster{t: t, isr: &fakeIsr{version: map[partition.TopicPartition]int32{}, isr: map[partition.TopicPartition][]int32{}},
		eps: &endpoints{m: map[int32]int32{}}, brokers: map[int32]*testBroker{}, dirs: map[int32]string{}, lag: 400 * time.Millisecond, fetchCfg: fc}
	for _, id := range ids {
		c.dirs[id] = t.TempDir()
		c.start(id, c.dirs[id])
	}
	t.Cleanup(func() {
		for _, b := range c.brokers { // fetchers first: no leader vanishes under them
			b.closeFetchers()
		}
		for _, b := range c.brokers {
			c.stop(b)
		}
	})
	return c
}

func (c *cluster) start(id int32, dir string) *testBroker {
	t := c.t
	if old := c.brokers[id]; old != nil {
		c.stop(old)
	}
	lg := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).With(zap.Int32("broker", id))
	b := &testBroker{id: id}
	var err error
	b.logs, err = storage.NewLogManager(storage.LogManagerConfig{Dirs: []string{dir}, Defaults: storage.DefaultLogConfig(), Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	b.sys = actors.NewSystem(lg)
	b.rm, err = partition.NewManager(partition.ManagerConfig{System: b.sys, Store: partition.StorageStore{M: b.logs}, BrokerID: id,
		Logger: lg, IsrWriter: c.isr, ReplicaLagTimeMax: c.lag,
		NewFetchers: func(r partition.ReplicaLookup) (partition.FetcherControl, error) {
			fc := Config{MaxWait: 200 * time.Millisecond, Backoff: 50 * time.Millisecond}
			if c.fetchCfg != nil {
				fc = *c.fetchCfg
			}
			fc.System, fc.BrokerID, fc.Replicas, fc.Endpoints, fc.Logger = b.sys, id, r, c.eps, lg
			fm, err := Start(fc)
			if err != nil {
				return nil, err
			}
			b.fm = fm
			return fm, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.BrokerID = id
	b.gate = &gate{Dispatcher: &handlers.Broker{Config: cfg, Log: lg, Replicas: b.rm}, stuck: make(chan int16, 1)}
	if c.fetchCfg != nil {
		b.gate.fetches = make(chan *kmsg.FetchRequest, 64)
	}
	b.srv = server.New(server.Config{Listeners: []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}}, b.gate, lg)
	if err := b.srv.Start(); err != nil {
		t.Fatal(err)
	}
	b.port = int32(b.srv.Addrs()[0].(*net.TCPAddr).Port)
	c.eps.mu.Lock()
	c.eps.m[id] = b.port
	c.eps.mu.Unlock()
	b.client, err = kgo.NewClient(kgo.SeedBrokers(b.srv.Addrs()[0].String()))
	if err != nil {
		t.Fatal(err)
	}
	b.client1, err = kgo.NewClient(kgo.SeedBrokers(b.srv.Addrs()[0].String()), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	c.brokers[id] = b
	return b
}

// stop shuts a broker down in the assembly's order.
func (c *cluster) stop(b *testBroker) {
	if b.stopped {
		return
	}
	b.stopped = true
	c.eps.mu.Lock()
	delete(c.eps.m, b.id)
	c.eps.mu.Unlock()
	b.client.Close()
	b.client1.Close()
	_ = b.srv.Close()
	b.closeFetchers()
	b.rm.Close()
	b.sys.Shutdown()
	_ = b.logs.Close()
}

// apply sends a LeaderAndIsr to every running broker in replicas, with the
// fake znode's version.
func (c *cluster) apply(tp partition.TopicPartition, leader, epoch int32, isr, replicas []int32, minIsr int) {
	c.isr.mu.Lock()
	c.isr.isr[tp] = slices.Clone(isr)
	c.isr.version[tp]++
	v := c.isr.version[tp]
	c.isr.mu.Unlock()
	for _, id := range replicas {
		b := c.brokers[id]
		if b == nil || b.stopped {
			continue
		}
		s := partition.LeaderAndIsr{TopicPartition: tp, Leader: leader, LeaderEpoch: epoch, ISR: isr, Replicas: replicas,
			ZkVersion: v, Config: storage.DefaultLogConfig(), MinInsyncReplicas: minIsr}
		if errs := b.rm.ApplyLeaderAndIsr([]partition.LeaderAndIsr{s}); len(errs) > 0 {
			c.t.Fatalf("broker %d LeaderAndIsr: %v", id, errs)
		}
	}
}

// produce sends one batch of n records to broker b (raw ProduceRequest)
// and returns the base offset or the error code.
func produce(t testing.TB, b *testBroker, tp partition.TopicPartition, acks int16, timeout time.Duration, vals ...string) (int64, *kerr.Error) {
	t.Helper()
	recs := make([]record.BatchRecord, len(vals))
	for i, v := range vals {
		recs[i] = record.BatchRecord{Value: []byte(v)}
	}
	batch, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli()}, recs)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks = acks
	req.TimeoutMillis = int32(timeout / time.Millisecond)
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = tp.Partition
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Second)
	defer cancel()
	cl := b.client
	if acks == 1 {
		cl = b.client1
	} else if acks != -1 {
		t.Fatalf("produce helper supports acks 1 and -1, not %d", acks)
	}
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
		return -1, e.(*kerr.Error)
	}
	return p.BaseOffset, nil
}

type batchID struct {
	base, last int64
	epoch      int32
	crc        uint32
}

// batches lists a broker's log for tp as (offsets, epoch, CRC) triples.
func batches(t *testing.T, b *testBroker, tp partition.TopicPartition) []batchID {
	t.Helper()
	l, ok := b.logs.Get(tp)
	if !ok {
		return nil
	}
	var out []batchID
	if err := l.ScanBatches(l.LogStartOffset(), func(h record.Header) bool {
		out = append(out, batchID{h.BaseOffset, h.LastOffset(), h.PartitionLeaderEpoch, h.CRC})
		return true
	}); err != nil {
		// A scan racing the follower's own truncation can hit a cut
		// segment; callers poll, so report "not there yet".
		t.Logf("scan of broker %d's log: %v", b.id, err)
		return nil
	}
	return out
}

func view(b *testBroker, tp partition.TopicPartition) *partition.View {
	h, ok := b.rm.Get(tp)
	if !ok {
		return &partition.View{HighWatermark: -1, LogEndOffset: -1}
	}
	return h.View()
}

// eventually polls cond every 10ms for at most d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var tp0 = partition.TopicPartition{Topic: "orders", Partition: 0}

func TestAcksAllWaitsForFollowersAndLogsMatch(t *testing.T) {
	c := newCluster(t, 1, 2, 3)
	c.apply(tp0, 1, 0, []int32{1, 2, 3}, []int32{1, 2, 3}, 2)
	var offs []int64
	for i := range 20 {
		off, err := produce(t, c.brokers[1], tp0, -1, 10*time.Second, fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i))
		if err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		offs = append(offs, off)
		// acks=all answered: the high watermark covers the batch, so every
		// follower has it.
		if hw := view(c.brokers[1], tp0).HighWatermark; hw < off+2 {
			t.Fatalf("acks=-1 answered at offset %d with leader HW %d", off, hw)
		}
		for _, id := range []int32{2, 3} {
			if leo := view(c.brokers[id], tp0).LogEndOffset; leo < off+2 {
				t.Fatalf("acks=-1 answered at offset %d but follower %d LEO %d", off, id, leo)
			}
		}
	}
	if offs[19] != 38 {
		t.Fatalf("last base offset %d, want 38", offs[19])
	}
	want := batches(t, c.brokers[1], tp0)
	for _, id := range []int32{2, 3} {
		eventually(t, 5*time.Second, "follower HW catches up", func() bool { return view(c.brokers[id], tp0).HighWatermark == 40 })
		if got := batches(t, c.brokers[id], tp0); !slices.Equal(got, want) {
			t.Fatalf("follower %d log differs:\n got %v\nwant %v", id, got, want)
		}
	}
	if isr, _ := c.isr.get(tp0); !slices.Equal(isr, []int32{1, 2, 3}) {
		t.Fatalf("ISR changed to %v with every follower fetching", isr)
	}
}

func TestMinInsyncAndIsrShrinkExpand(t *testing.T) {
	c := newCluster(t, 1, 2)
	c.apply(tp0, 1, 0, []int32{1, 2}, []int32{1, 2}, 2)
	if _, err := produce(t, c.brokers[1], tp0, -1, 5*time.Second, "x"); err != nil {
		t.Fatalf("produce with full ISR: %v", err)
	}
	// The follower stops fetching: after replica.lag.time.max.ms the
	// leader drops it from the ISR through the IsrWriter.
	c.brokers[2].fm.Unfollow(tp0)
	eventually(t, 5*time.Second, "ISR shrink", func() bool {
		isr, _ := c.isr.get(tp0)
		return slices.Equal(isr, []int32{1})
	})
	eventually(t, 2*time.Second, "leader installs the shrunk ISR", func() bool { return leaderISR(c.brokers[1]) == 1 })
	if _, err := produce(t, c.brokers[1], tp0, -1, 5*time.Second, "y"); err != kerr.NotEnoughReplicas {
		t.Fatalf("acks=-1 with ISR [1] and min.insync.replicas=2: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	if off, err := produce(t, c.brokers[1], tp0, 1, 5*time.Second, "z"); err != nil || off != 1 {
		t.Fatalf("acks=1 with a small ISR: offset %d err %v, want offset 1", off, err)
	}
	// The follower fetches again: it reaches the high watermark and the
	// leader adds it back.
	c.brokers[2].fm.Follow(tp0, 1, 0)
	eventually(t, 5*time.Second, "ISR expand", func() bool {
		isr, _ := c.isr.get(tp0)
		return slices.Equal(isr, []int32{1, 2})
	})
	eventually(t, 2*time.Second, "leader installs the expanded ISR", func() bool { return leaderISR(c.brokers[1]) == 2 })
	if off, err := produce(t, c.brokers[1], tp0, -1, 5*time.Second, "w"); err != nil || off != 2 {
		t.Fatalf("acks=-1 after the follower rejoined: offset %d err %v, want 2", off, err)
	}
}

// leaderISR is the size of the ISR the leader's handle holds.
func leaderISR(b *testBroker) int {
	return len(view(b, tp0).ISR)
}

func TestAcksAllTimesOutWhenFollowerIsStuck(t *testing.T) {
	c := newCluster(t, 1, 2)
	c.lag = time.Hour
	c.apply(tp0, 1, 0, []int32{1, 2}, []int32{1, 2}, 1)
	c.brokers[2].fm.Unfollow(tp0)
	start := time.Now()
	if _, err := produce(t, c.brokers[1], tp0, -1, 300*time.Millisecond, "x"); err != kerr.RequestTimedOut {
		t.Fatalf("acks=-1 with a stuck ISR member: %v, want REQUEST_TIMED_OUT", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("timeout answered after %v", d)
	}
	// The record stays in the leader's log (as in Kafka), above the HW.
	if v := view(c.brokers[1], tp0); v.LogEndOffset != 1 || v.HighWatermark != 0 {
		t.Fatalf("leader LEO %d HW %d, want 1 and 0", v.LogEndOffset, v.HighWatermark)
	}
}

func TestFollowerTruncatesDivergentSuffix(t *testing.T) {
	c := newCluster(t, 1, 2)
	c.apply(tp0, 1, 0, []int32{1, 2}, []int32{1, 2}, 1)
	for i := range 3 {
		if _, err := produce(t, c.brokers[1], tp0, -1, 5*time.Second, fmt.Sprint("common", i)); err != nil {
			t.Fatal(err)
		}
	}
	// A split: broker 2 leads alone in epoch 1 and takes 2 batches that
	// broker 1 never sees; then broker 1 leads alone in epoch 2 (an unclean
	// election) and takes 1 batch.
	c.brokers[2].rm.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp0, Leader: 2, LeaderEpoch: 1, ISR: []int32{2}, Replicas: []int32{1, 2}, Config: storage.DefaultLogConfig()}})
	for i := range 2 {
		if _, err := produce(t, c.brokers[2], tp0, 1, 5*time.Second, fmt.Sprint("lost", i)); err != nil {
			t.Fatal(err)
		}
	}
	c.brokers[1].rm.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp0, Leader: 1, LeaderEpoch: 2, ISR: []int32{1}, Replicas: []int32{1, 2}, Config: storage.DefaultLogConfig()}})
	if off, err := produce(t, c.brokers[1], tp0, 1, 5*time.Second, "kept"); err != nil || off != 3 {
		t.Fatalf("new leader append: offset %d err %v, want 3", off, err)
	}
	if leo := view(c.brokers[2], tp0).LogEndOffset; leo != 5 {
		t.Fatalf("diverged follower LEO %d, want 5", leo)
	}
	// Broker 2 follows broker 1 in epoch 2: OffsetForLeaderEpoch(1) ends
	// at 3 on the leader, so offsets 3-4 of epoch 1 go and the leader's
	// offset 3 replaces them.
	c.brokers[2].rm.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp0, Leader: 1, LeaderEpoch: 2, ISR: []int32{1}, Replicas: []int32{1, 2}, Config: storage.DefaultLogConfig()}})
	want := batches(t, c.brokers[1], tp0)
	eventually(t, 5*time.Second, "follower log equals the leader's", func() bool {
		return slices.Equal(batches(t, c.brokers[2], tp0), want)
	})
	if len(want) != 4 || want[3].epoch != 2 || want[3].base != 3 {
		t.Fatalf("leader log %v, want 3 epoch-0 batches then one epoch-2 batch at 3", want)
	}
}

func TestAcksAllAnswersNotEnoughReplicasAfterAppendWhenIsrShrinks(t *testing.T) {
	c := newCluster(t, 1, 2)
	c.apply(tp0, 1, 0, []int32{1, 2}, []int32{1, 2}, 2)
	if _, err := produce(t, c.brokers[1], tp0, -1, 5*time.Second, "x"); err != nil {
		t.Fatal(err)
	}
	c.brokers[2].fm.Unfollow(tp0)
	// Appended while the ISR still has 2 members; the follower never
	// fetches it; after replica.lag.time.max.ms the ISR shrinks to [1],
	// the HW passes the batch, and the waiting produce learns that fewer
	// than min.insync.replicas hold it.
	start := time.Now()
	if _, err := produce(t, c.brokers[1], tp0, -1, 10*time.Second, "y"); err != kerr.NotEnoughReplicasAfterAppend {
		t.Fatalf("acks=-1 across an ISR shrink: %v, want NOT_ENOUGH_REPLICAS_AFTER_APPEND", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("answered after %v; the shrink should come after ~%v", d, c.lag)
	}
	if v := view(c.brokers[1], tp0); v.HighWatermark != 2 || len(v.ISR) != 1 {
		t.Fatalf("leader HW %d ISR %v, want 2 and [1]", v.HighWatermark, v.ISR)
	}
}
