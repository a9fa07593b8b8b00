// Package clustertest runs a cluster of real brokers inside the test
// process: MakeCluster starts n brokers (the shipped cmd/internal/broker
// code, as `gregor server` builds it) on loopback listeners over one
// in-memory ZooKeeper (metastore.Memory), each with its own session. A
// test can kill a broker (no controlled shutdown, session expired),
// restart it, stop it cleanly, expire a session, find the controller and
// partition leaders in the metadata tree, and wait for conditions, each
// wait bounded and woken by tree changes. Without Java or processes the
// cluster scenarios run in well under a second each; the real-ZooKeeper,
// multi-process tests (test/cluster, test/chaos) stay the outer tier.
//
// It lives under cmd/ because cmd/internal/broker is internal to cmd;
// the name follows the storetest/httptest convention of Go test helpers.
package clustertest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"gregor/cmd/internal/broker"
	"gregor/config"
	"gregor/logging"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// DefaultProps are the broker settings MakeCluster uses: Kafka's timeouts
// shortened so failures are detected and repaired in tens of
// milliseconds. replication factor and offsets topic follow the cluster
// size. Tests override any of them through Options.Props.
var DefaultProps = map[string]string{
	"num.partitions":                       "1",
	"replica.lag.time.max.ms":              "500",
	"replica.fetch.wait.max.ms":            "20",
	"replica.fetch.backoff.ms":             "20",
	"controlled.shutdown.max.retries":      "3",
	"controlled.shutdown.retry.backoff.ms": "20",
	"group.initial.rebalance.delay.ms":     "0",
	"zookeeper.session.timeout.ms":         "6000",
}

// Options tune MakeClusterWith. The zero value is MakeCluster's.
type Options struct {
	// Props are server.properties entries applied to every broker on top
	// of DefaultProps and the per-broker ones (broker.id, listeners,
	// log.dirs, zookeeper.connect).
	Props map[string]string
}

// Cluster is n brokers (ids 1..n) over one in-memory ZooKeeper.
type Cluster struct {
	t   testing.TB
	ZK  *metastore.Memory        // the shared tree
	obs *metastore.MemorySession // the test's own session, for reads
	mu  sync.Mutex
	ns  map[int32]*Node
}

// Node is one broker slot: its id, log dir and port survive restarts.
type Node struct {
	ID    int32
	Port  int
	Dir   string
	Props map[string]string

	b    *broker.Broker           // nil while down
	sess *metastore.MemorySession // the running broker's session
	// lingering is the session of a crashed broker that has not expired
	// yet (Crash); Start expires it first.
	lingering *metastore.MemorySession
	log       *logBuffer
}

// MakeCluster starts brokers 1..n and waits until all are registered and
// one is the controller. Everything stops at the test's end.
func MakeCluster(t testing.TB, n int) *Cluster { return MakeClusterWith(t, n, Options{}) }

// MakeClusterWith is MakeCluster with options.
func MakeClusterWith(t testing.TB, n int, o Options) *Cluster {
	t.Helper()
	mem := metastore.NewMemory()
	c := &Cluster{t: t, ZK: mem, obs: mem.Open(), ns: map[int32]*Node{}}
	dirs := t.TempDir() // before stopAll is registered: cleanups run last-in first-out
	t.Cleanup(c.stopAll)
	rf := strconv.Itoa(n)
	offsetsRF := strconv.Itoa(min(n, 3))
	for id := int32(1); id <= int32(n); id++ {
		props := map[string]string{}
		for k, v := range DefaultProps {
			props[k] = v
		}
		props["default.replication.factor"] = rf
		props["offsets.topic.replication.factor"] = offsetsRF
		for k, v := range o.Props {
			props[k] = v
		}
		nd := &Node{ID: id, Port: freePort(t), Dir: filepath.Join(dirs, fmt.Sprintf("broker-%d", id)), Props: props, log: &logBuffer{}}
		props["broker.id"] = strconv.Itoa(int(id))
		props["listeners"] = fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", nd.Port)
		props["log.dirs"] = nd.Dir
		props["zookeeper.connect"] = "memory" // cluster mode; the store is injected
		c.ns[id] = nd
	}
	// Started one by one, so broker 1 is the first controller.
	for id := int32(1); id <= int32(n); id++ {
		c.Start(id)
	}
	c.WaitFor("every broker registered and a controller elected", 10*time.Second, func() (bool, string) {
		ids := c.Registered()
		return len(ids) == n && c.Controller() > 0, fmt.Sprintf("registered %v, controller %d", ids, c.Controller())
	})
	c.WaitMetadata("", 0)
	return c
}

// Node returns broker id's slot (nil for an unknown id).
func (c *Cluster) Node(id int32) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ns[id]
}

// Broker is broker id's running broker, nil while it is down.
func (c *Cluster) Broker(id int32) *broker.Broker {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.ns[id]; n != nil {
		return n.b
	}
	return nil
}

// Session is broker id's current metadata session (nil while it is down).
func (c *Cluster) Session(id int32) *metastore.MemorySession {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.ns[id]; n != nil {
		return n.sess
	}
	return nil
}

// Addr is broker id's listener, "127.0.0.1:<port>".
func (c *Cluster) Addr(id int32) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Node(id).Port))
}

// IDs are the broker ids, sorted.
func (c *Cluster) IDs() []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int32, 0, len(c.ns))
	for id := range c.ns {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Running are the ids of the brokers that are up, sorted.
func (c *Cluster) Running() []int32 {
	var out []int32
	for _, id := range c.IDs() {
		if c.Broker(id) != nil {
			out = append(out, id)
		}
	}
	return out
}

// Start starts broker id (again) over a new session, on its log dir and
// port. It fails the test if the broker does not start.
func (c *Cluster) Start(id int32) {
	c.t.Helper()
	n := c.Node(id)
	if n == nil || c.Broker(id) != nil {
		c.t.Fatalf("clustertest: broker %d unknown or already running", id)
	}
	if n.lingering != nil { // restarted after its old session timed out
		n.lingering.Expire()
		n.lingering = nil
	}
	began := time.Now()
	levels := logging.New(logging.Info) // the core logs at debug; BROKER_LOGGER levels filter
	log := levels.Logger(n.log.logger(id))
	cfg, err := config.Parse(n.Props, log)
	if err != nil {
		c.t.Fatalf("clustertest: broker %d config: %v", id, err)
	}
	sess := c.ZK.Open()
	b, err := broker.Start(cfg, log, broker.WithStore(sess), broker.WithLogLevels(levels))
	if err != nil {
		sess.Close()
		c.t.Fatalf("clustertest: start broker %d: %v\n%s", id, err, n.log.tail())
	}
	c.mu.Lock()
	n.b, n.sess = b, sess
	c.mu.Unlock()
	c.logf(began, "broker %d started", id)
}

// logf logs under -v only, with how long the step took.
func (c *Cluster) logf(began time.Time, format string, args ...any) {
	c.t.Helper()
	if testing.Verbose() {
		c.t.Logf("clustertest: "+format+" in %v", append(args, time.Since(began).Round(time.Millisecond))...)
	}
}

// Restart is Start, after the broker was killed or stopped.
func (c *Cluster) Restart(id int32) { c.t.Helper(); c.Start(id) }

// Kill stops broker id as kill -9 and the session timeout would: its
// session is cut off first (nothing it does while stopping reaches the
// metadata), it stops without a controlled shutdown, and then the
// ensemble expires its session, deleting /brokers/ids/<id> (and
// /controller if it held it).
func (c *Cluster) Kill(id int32) {
	c.t.Helper()
	c.Crash(id)
	c.ExpireCrashed(id)
}

// Crash is Kill without the session expiry: the broker is gone but, as
// during zookeeper.session.timeout.ms after a kill -9, ZooKeeper still
// holds its session, so /brokers/ids/<id> stays and the controller does
// not react; only the leaders notice the follower stopped fetching
// (replica.lag.time.max.ms). ExpireCrashed or Start ends that session.
func (c *Cluster) Crash(id int32) {
	c.t.Helper()
	began := time.Now()
	b, sess := c.take(id)
	sess.Disconnect()
	if err := b.Kill(); err != nil {
		c.t.Logf("clustertest: kill broker %d: %v", id, err)
	}
	c.logf(began, "broker %d killed (its session left to expire)", id)
	c.mu.Lock()
	c.ns[id].lingering = sess
	c.mu.Unlock()
}

// ExpireCrashed expires the session a Crash left behind (a no-op when
// there is none): the crashed broker's ephemerals vanish.
func (c *Cluster) ExpireCrashed(id int32) {
	c.mu.Lock()
	n := c.ns[id]
	s := n.lingering
	n.lingering = nil
	c.mu.Unlock()
	if s != nil {
		s.Expire()
	}
}

// Stop stops broker id cleanly: a controlled shutdown moves leadership
// away first, then it closes its session.
func (c *Cluster) Stop(id int32) {
	c.t.Helper()
	began := time.Now()
	b, _ := c.take(id)
	if err := b.Close(); err != nil {
		c.t.Logf("clustertest: stop broker %d: %v", id, err)
	}
	c.logf(began, "broker %d stopped (controlled shutdown)", id)
}

// ExpireSession expires broker id's session while it keeps running: its
// ephemerals vanish, then it re-registers in a new session.
func (c *Cluster) ExpireSession(id int32) {
	c.t.Helper()
	s := c.Session(id)
	if s == nil {
		c.t.Fatalf("clustertest: broker %d is not running", id)
	}
	s.Expire()
}

func (c *Cluster) take(id int32) (*broker.Broker, *metastore.MemorySession) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.ns[id]
	if n == nil || n.b == nil {
		c.t.Fatalf("clustertest: broker %d is not running", id)
	}
	b, s := n.b, n.sess
	n.b, n.sess = nil, nil
	return b, s
}

// stopAll kills every running broker (no controlled shutdown: the test is
// over) and closes the test's session; on failure it prints the brokers'
// logs.
func (c *Cluster) stopAll() {
	if c.t.Failed() || os.Getenv("CLUSTERTEST_LOGS") != "" {
		for _, id := range c.IDs() {
			c.t.Logf("broker %d log:\n%s", id, c.Node(id).log.tail())
		}
	}
	var wg sync.WaitGroup
	for _, id := range c.Running() {
		b, s := c.take(id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Disconnect()
			_ = b.Kill()
		}()
	}
	wg.Wait()
	c.obs.Close()
}

// Registered lists the ids under /brokers/ids.
func (c *Cluster) Registered() []string {
	ids, _ := c.obs.Children(zkmeta.BrokerIDsPath)
	return ids
}

// Controller is the id in /controller, -1 when there is none.
func (c *Cluster) Controller() int32 { return zkmeta.ReadController(c.obs.Get) }

// ControllerEpoch is /controller_epoch, 0 when absent.
func (c *Cluster) ControllerEpoch() int32 {
	data, _, err := c.obs.Get(zkmeta.ControllerEpochPath)
	if err != nil {
		return 0
	}
	e, _ := zkmeta.DecodeControllerEpoch(data)
	return e
}

// PartitionState reads /brokers/topics/<topic>/partitions/<p>/state.
func (c *Cluster) PartitionState(topic string, p int32) (zkmeta.PartitionState, bool) {
	data, _, err := c.obs.Get(zkmeta.PartitionStatePath(topic, p))
	if err != nil {
		return zkmeta.PartitionState{}, false
	}
	s, err := zkmeta.DecodePartitionState(data)
	return s, err == nil
}

// Leader is the leader of topic-p in the tree, -1 when none (or unknown).
func (c *Cluster) Leader(topic string, p int32) int32 {
	s, ok := c.PartitionState(topic, p)
	if !ok {
		return -1
	}
	return s.Leader
}

// Assignment is topic's replica assignment (/brokers/topics/<topic>).
func (c *Cluster) Assignment(topic string) map[int32][]int32 {
	data, _, err := c.obs.Get(zkmeta.TopicPath(topic))
	if err != nil {
		return nil
	}
	a, err := zkmeta.DecodeTopicAssignment(topic, data)
	if err != nil {
		return nil
	}
	return a.Partitions
}

// Store is the test's own session on the tree (reads and admin writes
// such as /admin/reassign_partitions).
func (c *Cluster) Store() metastore.Store { return c.obs }

// WaitFor returns once cond holds, re-checking it at every change of the
// metadata tree and at least every 10 ms (for state outside the tree,
// such as a broker's metadata cache); after d it fails the test with
// what and cond's last description.
func (c *Cluster) WaitFor(what string, d time.Duration, cond func() (bool, string)) {
	c.t.Helper()
	began := time.Now()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		changed := c.ZK.Changed() // before cond: a change during it wakes us
		ok, last := cond()
		if ok {
			if testing.Verbose() {
				c.t.Logf("clustertest: %s after %v", what, time.Since(began).Round(time.Millisecond))
			}
			return
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-deadline.C:
			c.t.Fatalf("clustertest: timed out after %v waiting for %s (last: %s)\ntree:\n%s", d, what, last, c.ZK.Dump())
		}
	}
}

// freePort is a free loopback port (the listener must know its port
// before it registers, so :0 cannot be used).
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// logBuffer keeps a broker's log (info and above, across restarts) in
// memory, printed when a test fails.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) Sync() error { return nil }

// tail is the last 64 KiB of the log.
func (l *logBuffer) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	if len(s) > 64<<10 {
		s = "…" + s[len(s)-64<<10:]
	}
	return s
}

func (l *logBuffer) logger(id int32) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(l), zapcore.DebugLevel)
	return zap.New(core).With(zap.Int32("broker", id))
}
