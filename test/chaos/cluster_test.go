package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/replication/zkstore"
	"gregor/test/harness"
	"gregor/test/zkharness"
)

// sessionTimeout is the brokers' zookeeper.session.timeout.ms: short, so a
// killed broker leaves /brokers/ids (and may come back) quickly.
const sessionTimeout = 4 * time.Second

// node is one broker process and its admin listener.
type node struct {
	*harness.Broker
	admin string // http://127.0.0.1:<admin port>
}

// cluster is one ZooKeeper and brokers 1..n, each with an admin listener.
type cluster struct {
	t       *testing.T
	zk      *zkharness.Server
	nodes   map[int32]*node
	store   metastore.Store // the test's own ZooKeeper session (reads only)
	http    *http.Client
	connect string
}

func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	zk := zkharness.Start(t, zkharness.Options{})
	c := &cluster{t: t, zk: zk, nodes: map[int32]*node{}, connect: zk.Addr() + "/gregor",
		http: &http.Client{Timeout: 10 * time.Second}}
	for id := int32(1); id <= int32(n); id++ {
		adminPort := harness.FreePort(t)
		props := map[string]string{
			"broker.id":                            strconv.Itoa(int(id)),
			"zookeeper.connect":                    c.connect,
			"zookeeper.session.timeout.ms":         strconv.Itoa(int(sessionTimeout / time.Millisecond)),
			"admin.listener":                       fmt.Sprintf("127.0.0.1:%d", adminPort),
			"default.replication.factor":           strconv.Itoa(n),
			"offsets.topic.replication.factor":     strconv.Itoa(n),
			"offsets.topic.num.partitions":         "3",
			"num.partitions":                       "3",
			"min.insync.replicas":                  "2",
			"unclean.leader.election.enable":       "false",
			"replica.lag.time.max.ms":              "3000",
			"controlled.shutdown.max.retries":      "2", // attempts, as Kafka counts them
			"controlled.shutdown.retry.backoff.ms": "500",
		}
		c.nodes[id] = &node{Broker: harness.StartBroker(t, props), admin: fmt.Sprintf("http://127.0.0.1:%d", adminPort)}
	}
	s, err := zkstore.Open(c.connect, zkstore.Config{SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("test ZooKeeper session: %v", err)
	}
	c.store = s
	t.Cleanup(func() { s.Close() })
	c.waitFor("every broker registered", 60*time.Second, func() (bool, string) {
		ids := c.registered()
		return len(ids) == n, fmt.Sprint(ids)
	})
	return c
}

// ids lists the broker ids in order.
func (c *cluster) ids() []int32 {
	out := make([]int32, 0, len(c.nodes))
	for id := range c.nodes {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// up reports whether broker id's process is running.
func (c *cluster) up(id int32) bool { return c.nodes[id].ExitCode() == -1 }

func (c *cluster) seeds() []string {
	var out []string
	for _, id := range c.ids() {
		if c.up(id) {
			out = append(out, c.nodes[id].Addr())
		}
	}
	return out
}

// seedOpt seeds a franz-go client with every broker (running or not).
func (c *cluster) seedOpt() kgo.Opt {
	var seeds []string
	for _, id := range c.ids() {
		seeds = append(seeds, c.nodes[id].Addr())
	}
	return kgo.SeedBrokers(seeds...)
}

// client is a franz-go client seeded with every broker (running or not:
// franz-go skips unreachable seeds), closed at test end.
func (c *cluster) client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	var seeds []string
	for _, id := range c.ids() {
		seeds = append(seeds, c.nodes[id].Addr())
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

func (c *cluster) registered() []string {
	ids, err := c.store.Children(zkmeta.BrokerIDsPath)
	if err != nil {
		return nil
	}
	return ids
}

func (c *cluster) isRegistered(id int32) bool {
	for _, s := range c.registered() {
		if s == strconv.Itoa(int(id)) {
			return true
		}
	}
	return false
}

func (c *cluster) partitionState(topic string, p int32) (zkmeta.PartitionState, bool) {
	data, _, err := c.store.Get(zkmeta.PartitionStatePath(topic, p))
	if err != nil {
		return zkmeta.PartitionState{}, false
	}
	s, err := zkmeta.DecodePartitionState(data)
	return s, err == nil
}

// fullISR reports whether every partition of topics (with n partitions
// each) has a leader and all len(nodes) replicas in its ISR, per ZooKeeper.
func (c *cluster) fullISR(topics map[string]int32) (bool, string) {
	for topic, n := range topics {
		for p := int32(0); p < n; p++ {
			s, ok := c.partitionState(topic, p)
			if !ok || s.Leader < 0 || len(s.ISR) != len(c.nodes) {
				return false, fmt.Sprintf("%s-%d: %+v", topic, p, s)
			}
		}
	}
	return true, ""
}

// waitFor polls cond every 100 ms until it holds or d passes (the cluster
// offers no event to await); it fails the test on timeout.
func (c *cluster) waitFor(what string, d time.Duration, cond func() (bool, string)) {
	c.t.Helper()
	if last, ok := poll(d, cond); !ok {
		c.t.Fatalf("timed out after %v waiting for %s (last: %s)", d, what, last)
	}
}

// poll is waitFor without failing: it reports whether cond came to hold.
func poll(d time.Duration, cond func() (bool, string)) (string, bool) {
	deadline := time.Now().Add(d)
	for {
		ok, s := cond()
		if ok {
			return "", true
		}
		if time.Now().After(deadline) {
			return s, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createTopic creates a topic and waits for leaders and full ISRs.
func (c *cluster) createTopic(topic string, partitions int32, configs map[string]*string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := c.client()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, partitions, int16(len(c.nodes)), configs, topic)
	cl.Close()
	if err != nil {
		c.t.Fatalf("create %s: %v", topic, err)
	}
	if r := resp[topic]; r.Err != nil {
		c.t.Fatalf("create %s: %v", topic, r.Err)
	}
	c.waitFor("full ISRs of "+topic, 30*time.Second, func() (bool, string) {
		return c.fullISR(map[string]int32{topic: partitions})
	})
}

// actorInfo is one row of GET /actors.
type actorInfo struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	Restarts int64  `json:"restarts"`
}

// actors lists broker id's live actors of kind (nil when it is down).
func (c *cluster) actors(id int32, kind string) []actorInfo {
	resp, err := c.http.Get(c.nodes[id].admin + "/actors?kind=" + kind)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var out []actorInfo
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		return nil
	}
	return out
}

// kill asks broker id's admin listener to kill the actor at path count
// times (queued kills hit successive incarnations); it reports whether the
// broker injected the fault.
func (c *cluster) kill(id int32, path string, count int) (bool, error) {
	body, _ := json.Marshal(map[string]any{"action": "kill", "actor": path, "count": count})
	resp, err := c.http.Post(c.nodes[id].admin+"/faults", "application/json", strings.NewReader(string(body)))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusNotFound: // the actor stopped meanwhile
		return false, nil
	default:
		return false, fmt.Errorf("POST /faults on broker %d: %s: %s", id, resp.Status, b)
	}
}

// metric sums the samples of one counter family in broker id's /metrics
// (ok false when the broker is down or did not answer).
func (c *cluster) metric(id int32, name string) (float64, bool) {
	sum, _, err := harness.MetricSum(c.http, c.nodes[id].admin, name)
	return sum, err == nil
}

// keepLogsOnFailure copies each broker's broker.log to a directory under
// the system temp dir when the test failed (t.TempDir goes with the test)
// and logs its path with the last lines of each log.
func (c *cluster) keepLogsOnFailure() {
	if !c.t.Failed() {
		return
	}
	dir, err := os.MkdirTemp("", "gregor-chaos-logs-")
	if err != nil {
		c.t.Logf("keep broker logs: %v", err)
		return
	}
	for _, id := range c.ids() {
		data := c.nodes[id].Log()
		name := filepath.Join(dir, fmt.Sprintf("broker-%d.log", id))
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			c.t.Logf("keep broker %d log: %v", id, err)
			continue
		}
		lines := strings.Split(strings.TrimRight(data, "\n"), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		c.t.Logf("--- broker %d log (%s), last %d lines ---\n%s", id, name, len(lines), strings.Join(lines, "\n"))
	}
	// ZooKeeper's view of every partition at the end.
	for _, tp := range []struct {
		topic string
		n     int32
	}{{topic, partitions}, {eosOut, partitions}, {"__consumer_offsets", 3}, {"__transaction_state", txnStatePartitions}} {
		for p := int32(0); p < tp.n; p++ {
			s, _ := c.partitionState(tp.topic, p)
			c.t.Logf("zk %s-%d: %+v", tp.topic, p, s)
		}
	}
	c.t.Logf("broker logs kept in %s", dir)
}
