package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/test/harness"
)

// TestThrottledReassignment: kafka-reassign-partitions.sh
// --bootstrap-server --execute --throttle 1000000 adds a replica of a 20 MB partition on
// another broker; the tool writes the broker rates (/config/brokers/<id>)
// and the topic's throttled replicas as Kafka computes them; the new
// replica grows at 1 MB/s ±20% (measured on its log over 12 s after the
// first two seconds); --verify while it moves says it is in progress and
// keeps the throttles; once done --verify clears them (the znodes keep no
// throttle key). The leader and follower byte-rate metrics report the
// traffic and partitions were left out. The rates reach the brokers as
// dynamic broker configs (IncrementalAlterConfigs, then /config/changes):
// nothing is set in server.properties.
func TestThrottledReassignment(t *testing.T) {
	const rate = 1_000_000
	c := startCluster(t, 3, nil, nil)
	const topic = "throttled"
	c.createTopic(topic, 1, 1, nil)
	leader := c.assignment(topic)[0][0]
	dest := leader%3 + 1

	// 20 MB of incompressible records.
	cl := c.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const recSize, nrec = 16 << 10, 1280
	for i := 0; i < nrec; i += 64 {
		var rs []*kgo.Record
		for j := 0; j < 64; j++ {
			v := make([]byte, recSize)
			_, _ = rand.Read(v)
			rs = append(rs, &kgo.Record{Topic: topic, Value: v})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	plan := writeFile(t, "plan.json", fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":[%d,%d]}]}`, topic, leader, dest))
	code, out, errs := script(t, "kafka-reassign-partitions.sh", "--bootstrap-server", c.seeds()[0], "--reassignment-json-file", plan, "--execute", "--throttle", strconv.Itoa(rate))
	if code != 0 || !strings.Contains(out, "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.\nThe inter-broker throttle limit was set to 1000000 B/s\nSuccessfully started partition reassignment for throttled-0\n") {
		t.Fatalf("--execute: exit %d\n%s\n%s", code, out, errs)
	}
	// What the tool wrote: rates on the brokers of the move only, the
	// existing replica as leader-throttled, the new one as follower-throttled.
	for id := int32(1); id <= 3; id++ {
		cfg := c.brokerConfig(id)
		want := ""
		if id == leader || id == dest {
			want = strconv.Itoa(rate)
		}
		if cfg["leader.replication.throttled.rate"] != want || cfg["follower.replication.throttled.rate"] != want {
			t.Errorf("/config/brokers/%d = %v, want both rates %q", id, cfg, want)
		}
	}
	tc := c.topicConfig(topic)
	if tc["leader.replication.throttled.replicas"] != fmt.Sprintf("0:%d", leader) || tc["follower.replication.throttled.replicas"] != fmt.Sprintf("0:%d", dest) {
		t.Fatalf("/config/topics/%s = %v, want leader 0:%d follower 0:%d", topic, tc, leader, dest)
	}

	// The new replica's log, sampled.
	dir := filepath.Join(c.brokers[dest].DataDir, topic+"-0")
	size := func() int64 {
		var n int64
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".log") {
				if fi, err := e.Info(); err == nil {
					n += fi.Size()
				}
			}
		}
		return n
	}
	c.waitFor("the new replica receives data", 30*time.Second, func() (bool, string) { return size() > 0, dir })
	first := time.Now()
	sampleAt := func(d time.Duration) (time.Time, int64) {
		time.Sleep(time.Until(first.Add(d))) // measuring over time, not waiting for an event
		return time.Now(), size()
	}
	t1, b1 := sampleAt(2 * time.Second)

	// In progress: --verify says so and leaves every throttle in place.
	code, out, errs = script(t, "kafka-reassign-partitions.sh", "--bootstrap-server", c.seeds()[0], "--verify", "--reassignment-json-file", plan)
	if code != 0 || !strings.Contains(out, "Reassignment of partition throttled-0 is still in progress.") || strings.Contains(out, "Clearing") {
		t.Fatalf("--verify in progress: exit %d\n%s\n%s", code, out, errs)
	}
	if tc := c.topicConfig(topic); tc["leader.replication.throttled.replicas"] == "" || c.brokerConfig(dest)["follower.replication.throttled.rate"] == "" {
		t.Fatalf("throttles removed while in progress: topic %v broker %v", tc, c.brokerConfig(dest))
	}

	t2, b2 := sampleAt(14 * time.Second)
	got := float64(b2-b1) / t2.Sub(t1).Seconds()
	t.Logf("new replica grew %d bytes in %v: %.0f B/s (limit %d)", b2-b1, t2.Sub(t1).Round(time.Millisecond), got, rate)
	if got < 0.8*rate || got > 1.2*rate {
		t.Errorf("throttled replication moved %.0f B/s, want %d ±20%%", got, rate)
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	fr, _, err := harness.MetricSum(hc, c.admins[dest], "kafka_server_followerreplication_byte_rate")
	lr, _, err2 := harness.MetricSum(hc, c.admins[leader], "kafka_server_leaderreplication_byte_rate")
	if err != nil || err2 != nil || fr < 0.5*rate || fr > 1.5*rate || lr < 0.5*rate || lr > 1.5*rate {
		t.Errorf("byte-rate metrics: follower %.0f (%v), leader %.0f (%v), want about %d", fr, err, lr, err2, rate)
	}
	lo, _, _ := harness.MetricSum(hc, c.admins[leader], "gregor_replication_throttled_partitions_total")
	fo, _, _ := harness.MetricSum(hc, c.admins[dest], "gregor_replication_throttled_partitions_total")
	if lo+fo == 0 {
		t.Errorf("no partition was left out of a fetch (leader %v, follower %v)", lo, fo)
	}

	// Done: --verify clears every throttle.
	c.waitFor("--verify reports completion", 60*time.Second, func() (bool, string) {
		code, out, errs = script(t, "kafka-reassign-partitions.sh", "--bootstrap-server", c.seeds()[0], "--verify", "--reassignment-json-file", plan)
		return code == 0 && strings.Contains(out, "Reassignment of partition throttled-0 is completed."), out + errs
	})
	if !strings.Contains(out, "Clearing broker-level throttles on brokers 1,2,3\nClearing topic-level throttles on topic throttled\n") {
		t.Fatalf("--verify after completion:\n%s", out)
	}
	for id := int32(1); id <= 3; id++ {
		for k := range c.brokerConfig(id) {
			if strings.Contains(k, "throttled") || strings.Contains(k, "alter.log.dirs") {
				t.Errorf("/config/brokers/%d keeps %s", id, k)
			}
		}
	}
	if tc := c.topicConfig(topic); len(tc) != 0 {
		t.Errorf("/config/topics/%s keeps %v", topic, tc)
	}
}

// brokerConfig reads /config/brokers/<id> (empty when absent).
func (c *cluster) brokerConfig(id int32) map[string]string {
	c.t.Helper()
	return c.configZnode(zkmeta.BrokerConfigPath(strconv.Itoa(int(id))))
}

// topicConfig reads /config/topics/<t> (empty when absent).
func (c *cluster) topicConfig(topic string) map[string]string {
	c.t.Helper()
	return c.configZnode(zkmeta.TopicConfigPath(topic))
}

func (c *cluster) configZnode(path string) map[string]string {
	c.t.Helper()
	data, _, err := c.store.Get(path)
	if errors.Is(err, metastore.ErrNoNode) {
		return map[string]string{}
	}
	if err != nil {
		c.t.Fatal(err)
	}
	m, err := zkmeta.DecodeConfig(data)
	if err != nil {
		c.t.Fatal(err)
	}
	return m
}
