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
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/replication/zkstore"
	"gregor/storage/record"
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
	admins  map[int32]string // admin listener URL (http://host:port) of each broker startCluster started
	// clientOpts are added to every client (and admin) the cluster makes.
	clientOpts []kgo.Opt
}

// startCluster starts ZooKeeper and n brokers (ids 1..n) under the chroot
// /gregor; extra properties apply to every broker. The brokers in proxied
// connect to ZooKeeper through their own pausable proxy (c.proxies).
// Every broker has an admin listener (c.admins, for /metrics) unless extra
// sets admin.listener.
func startCluster(t *testing.T, n int, extra map[string]string, proxied []int32) *cluster {
	t.Helper()
	return startClusterZK(t, zkharness.Options{}, n, extra, proxied)
}

// startClusterZK is startCluster with ZooKeeper started with zkOpts.
func startClusterZK(t *testing.T, zkOpts zkharness.Options, n int, extra map[string]string, proxied []int32) *cluster {
	t.Helper()
	return startClusterEach(t, zkOpts, n, extra, proxied, nil)
}

// startClusterEach is startClusterZK with each(id)'s properties applied
// to broker id after extra (per-broker listeners, say); each may be nil.
func startClusterEach(t *testing.T, zkOpts zkharness.Options, n int, extra map[string]string, proxied []int32, each func(id int32) map[string]string) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("cluster tests start ZooKeeper and broker processes")
	}
	zk := zkharness.Start(t, zkOpts)
	c := &cluster{t: t, zk: zk, connect: zk.Addr() + "/gregor", brokers: map[int32]*harness.Broker{}, proxies: map[int32]*zkharness.Proxy{}, admins: map[int32]string{}}
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
			"controlled.shutdown.max.retries":      "2", // attempts, as Kafka counts them
			"controlled.shutdown.retry.backoff.ms": "500",
		}
		if px := c.proxies[id]; px != nil {
			props["zookeeper.connect"] = px.Addr() + "/gregor"
		}
		if _, ok := extra["admin.listener"]; !ok {
			addr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
			props["admin.listener"] = addr
			c.admins[id] = "http://" + addr
		}
		for k, v := range extra {
			props[k] = v
		}
		if each != nil {
			for k, v := range each(id) {
				props[k] = v
			}
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
		// Running, not ExitCode: a killed process's exit code is -1 too.
		if b.Running() {
			out = append(out, b.Addr())
		}
	}
	sort.Strings(out)
	return out
}

// client is a franz-go client over every running broker, closed at test end.
func (c *cluster) client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(c.seeds()...)}, c.clientOpts...), opts...)...)
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
func (c *cluster) controllerID() int32 { return zkmeta.ReadController(c.store.Get) }

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

// rawProduce sends one record batch holding vals to partition p of topic
// on broker addr with a raw ProduceRequest (no client retries, so the
// broker's error code is seen as is). It returns the partition's error
// code (0 on success) and the base offset the broker assigned.
func rawProduce(t *testing.T, addr, topic string, p int32, acks int16, timeout time.Duration, vals ...string) (int16, int64) {
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
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = p
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	// kgo rewrites a raw ProduceRequest's acks to the client's own.
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.AllISRAcks())}
	switch acks {
	case -1:
	case 1:
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	default:
		t.Fatalf("rawProduce supports acks 1 and -1, not %d", acks)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		t.Fatalf("produce to %s: %v", addr, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("produce to %s: response %+v", addr, resp)
	}
	rpr := resp.Topics[0].Partitions[0]
	return rpr.ErrorCode, rpr.BaseOffset
}

// endOffset is partition p's log end offset (ListOffsets latest, as a
// consumer sees it: the high watermark) asked of broker addr; -1 with the
// error code when the broker refuses.
func endOffset(t *testing.T, addr, topic string, p int32) (int64, int16) {
	t.Helper()
	o, code, err := tryEndOffset(addr, topic, p)
	if err != nil {
		t.Fatal(err)
	}
	return o, code
}

// tryEndOffset is endOffset returning a request failure (such as a
// stopped broker) as an error.
func tryEndOffset(addr, topic string, p int32) (int64, int16, error) {
	o, code, err := harness.EndOffset(addr, topic, p, 10*time.Second)
	if err != nil || code != 0 {
		return -1, code, err
	}
	return o, 0, nil
}

// readPartition consumes partition p of topic from offset 0 up to (not
// including) end through the given brokers and returns the values by
// offset; it fails the test after 30 s.
func readPartition(t *testing.T, seeds []string, topic string, p int32, end int64) map[int64]string {
	t.Helper()
	got := map[int64]string{}
	if end <= 0 {
		return got
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(0)}}),
		kgo.FetchMaxWait(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if _, ok := got[end-1]; ok {
			return got
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s-%d: %d records below offset %d after 30 s", topic, p, len(got), end)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < end {
				got[r.Offset] = string(r.Value)
			}
		})
	}
}

// codeName is a Kafka error code's name for messages ("NONE" for 0).
func codeName(code int16) string {
	if err := kerr.ErrorForCode(code); err != nil {
		return err.Error()
	}
	return "NONE"
}

// waitServing waits until the leader ZooKeeper names for partition p of
// topic answers ListOffsets for it (it has applied its LeaderAndIsr; the
// znode is written before the broker hears of it) and returns that leader.
func (c *cluster) waitServing(topic string, p int32, d time.Duration) int32 {
	c.t.Helper()
	var leader int32 = -1
	c.waitFor(fmt.Sprintf("the leader of %s-%d serving", topic, p), d, func() (bool, string) {
		s, ok := c.partitionState(topic, p)
		b := c.brokers[s.Leader]
		if !ok || b == nil {
			return false, fmt.Sprintf("%+v", s)
		}
		// A leader just killed may still be named; its probe fails.
		if _, code, err := tryEndOffset(b.Addr(), topic, p); err != nil || code != 0 {
			return false, fmt.Sprintf("leader %d: %s %v", s.Leader, codeName(code), err)
		}
		leader = s.Leader
		return true, ""
	})
	return leader
}

// waitUnregistered waits until /brokers/ids/<id> is gone. A SIGKILLed
// broker's registration lives until its ZooKeeper session expires, and
// a restart before that is refused (broker.id already registered), as
// Kafka's is.
func (c *cluster) waitUnregistered(id int32) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("/brokers/ids/%d to vanish", id), 3*sessionTimeout+10*time.Second, func() (bool, string) {
		for _, r := range c.registered() {
			if r == strconv.Itoa(int(id)) {
				return false, fmt.Sprint(c.registered())
			}
		}
		return true, ""
	})
}
