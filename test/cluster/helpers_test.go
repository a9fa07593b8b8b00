// Package cluster runs ZooKeeper-coordinated Gregor clusters: a real
// ZooKeeper (test/zkharness) and several real broker processes
// (test/harness), driven by franz-go clients, with brokers killed,
// restarted and cut off from ZooKeeper.
package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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

// sessionTimeout is the brokers' zookeeper.session.timeout.ms: short, so
// a killed broker leaves /brokers/ids quickly.
const sessionTimeout = 4 * time.Second

// cluster is one ZooKeeper plus brokers 1..n.
type cluster struct {
	t       *testing.T
	zk      *zkharness.Server
	connect string // zookeeper.connect of the brokers (with chroot)
	brokers map[int32]*harness.Broker
	store   metastore.Store // the test's own ZooKeeper session (reads only)
	proxies map[int32]*zkharness.Proxy
}

// startCluster starts ZooKeeper and n brokers (ids 1..n) under the chroot
// /gregor; extra properties apply to every broker. The brokers in proxied
// connect to ZooKeeper through their own pausable proxy (c.proxies).
func startCluster(t *testing.T, n int, extra map[string]string, proxied []int32) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("cluster tests start ZooKeeper and broker processes")
	}
	zk := zkharness.Start(t, zkharness.Options{})
	c := &cluster{t: t, zk: zk, connect: zk.Addr() + "/gregor", brokers: map[int32]*harness.Broker{}, proxies: map[int32]*zkharness.Proxy{}}
	for _, id := range proxied {
		c.proxies[id] = zkharness.NewProxy(t, zk.Addr())
	}
	for id := int32(1); id <= int32(n); id++ {
		props := map[string]string{
			"broker.id":                            strconv.Itoa(int(id)),
			"zookeeper.connect":                    c.connect,
			"zookeeper.session.timeout.ms":         strconv.Itoa(int(sessionTimeout / time.Millisecond)),
			"default.replication.factor":           strconv.Itoa(n),
			"offsets.topic.replication.factor":     strconv.Itoa(n),
			"num.partitions":                       "3",
			"replica.lag.time.max.ms":              "3000",
			"controlled.shutdown.max.retries":      "1",
			"controlled.shutdown.retry.backoff.ms": "500",
		}
		if px := c.proxies[id]; px != nil {
			props["zookeeper.connect"] = px.Addr() + "/gregor"
		}
		for k, v := range extra {
			props[k] = v
		}
		c.brokers[id] = harness.StartBroker(t, props)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for id, b := range c.brokers {
			if dir := os.Getenv("GREGOR_CLUSTER_LOGS"); dir != "" {
				_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("broker-%d.log", id)), []byte(b.Log()), 0o644)
			}
		}
	})
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

// seeds are the addresses of the running brokers.
func (c *cluster) seeds() []string {
	var out []string
	for _, b := range c.brokers {
		if b.ExitCode() == -1 {
			out = append(out, b.Addr())
		}
	}
	sort.Strings(out)
	return out
}

// client is a franz-go client over every running broker, closed at test end.
func (c *cluster) client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.seeds()...)}, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

func (c *cluster) admin() *kadm.Client { return kadm.NewClient(c.client()) }

// registered lists the ids under /brokers/ids.
func (c *cluster) registered() []string {
	ids, err := c.store.Children(zkmeta.BrokerIDsPath)
	if err != nil {
		return nil
	}
	return ids
}

// controllerID reads /controller (-1 when absent).
func (c *cluster) controllerID() int32 {
	data, _, err := c.store.Get(zkmeta.ControllerPath)
	if err != nil {
		return -1
	}
	id, err := zkmeta.DecodeController(data)
	if err != nil {
		return -1
	}
	return id
}

// partitionState reads /brokers/topics/<t>/partitions/<p>/state.
func (c *cluster) partitionState(topic string, p int32) (zkmeta.PartitionState, bool) {
	data, _, err := c.store.Get(zkmeta.PartitionStatePath(topic, p))
	if err != nil {
		return zkmeta.PartitionState{}, false
	}
	s, err := zkmeta.DecodePartitionState(data)
	return s, err == nil
}

// waitFor polls cond (every 100 ms) until it holds or d passes; the
// string is logged on failure. Polling is needed: the cluster gives no
// event a test could await.
func (c *cluster) waitFor(what string, d time.Duration, cond func() (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	var last string
	for {
		ok, s := cond()
		if ok {
			return
		}
		last = s
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %v waiting for %s (last: %s)", d, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// describe returns the topic's partitions as Metadata shows them from the
// given broker's cache.
func describe(t *testing.T, b *harness.Broker, topic string) (kadm.TopicDetail, error) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	d, ok := td[topic]
	if !ok {
		return kadm.TopicDetail{}, fmt.Errorf("topic %s not in metadata", topic)
	}
	return d, d.Err
}

// createTopic creates a topic through the admin API (retried on the
// controller by kadm) and waits until every partition has a leader and a
// full ISR in ZooKeeper.
func (c *cluster) createTopic(topic string, partitions int32, rf int16, configs map[string]*string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.admin().CreateTopics(ctx, partitions, rf, configs, topic)
	if err != nil {
		c.t.Fatalf("create %s: %v", topic, err)
	}
	if r := resp[topic]; r.Err != nil {
		c.t.Fatalf("create %s: %v", topic, r.Err)
	}
	c.waitFor("leaders and full ISRs of "+topic, 30*time.Second, func() (bool, string) {
		for p := int32(0); p < partitions; p++ {
			s, ok := c.partitionState(topic, p)
			if !ok || s.Leader < 0 || len(s.ISR) != int(rf) {
				return false, fmt.Sprintf("partition %d: %+v", p, s)
			}
		}
		return true, ""
	})
}

func sortedIDs(s []int32) []int32 {
	out := append([]int32(nil), s...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func contains(s []int32, x int32) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
