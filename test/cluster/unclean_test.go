package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// createAssigned creates a one-partition topic with the given replica
// assignment (first replica = preferred leader) and topic configs through
// CreateTopics on the controller, and waits for its leader to serve with
// the full ISR.
func (c *cluster) createAssigned(topic string, replicas []int32, configs map[string]string) {
	c.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 20000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, replicas
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	for k, v := range configs {
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, cfg)
	}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, c.client()) // kgo routes it to the controller
	if err != nil {
		c.t.Fatalf("create %s: %v", topic, err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		c.t.Fatalf("create %s: %+v", topic, resp.Topics)
	}
	c.waitFor("leader and full ISR of "+topic, 30*time.Second, func() (bool, string) {
		s, ok := c.partitionState(topic, 0)
		return ok && s.Leader == replicas[0] && len(s.ISR) == len(replicas), fmt.Sprintf("%+v", s)
	})
	c.waitServing(topic, 0, 20*time.Second)
}

var adminAddrRE = regexp.MustCompile(`admin listener started.*"addr":\s*"([^"]+)"`)

// metric reads the value of an unlabelled counter or gauge from broker
// b's admin listener (admin.listener=127.0.0.1:0; the bound address is
// taken from the broker's latest "admin listener started" log line).
func metric(t *testing.T, b *harness.Broker, name string) float64 {
	t.Helper()
	m := adminAddrRE.FindAllStringSubmatch(b.Log(), -1)
	if len(m) == 0 {
		t.Fatalf("broker %s logged no admin listener address", b.Addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m[len(m)-1][1]+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return v
		}
	}
	t.Fatalf("/metrics of broker %s has no %s", b.Addr(), name)
	return 0
}

// TestUncleanLeaderElection: two RF 2 topics on the same two brokers L
// (leader) and F, neither of them the controller; "clean" has the default
// unclean.leader.election.enable=false, "dirty" overrides it to true.
// F is killed and leaves the ISRs, records are acknowledged by L alone,
// then L is killed: both partitions are offline. When F (out of sync)
// comes back, "clean" stays without a leader (F must not lead: it lacks
// acknowledged records) while "dirty" elects F (unclean: the records only
// L had are lost) and the controller counts one unclean election. When L
// comes back it leads "clean" again with every acknowledged record, and
// follows F on "dirty", truncating its divergent records to rejoin the ISR.
func TestUncleanLeaderElection(t *testing.T) {
	c := startCluster(t, 3, map[string]string{"admin.listener": "127.0.0.1:0"}, nil)
	ctrl := c.controllerID()
	var others []int32
	for _, id := range []int32{1, 2, 3} {
		if id != ctrl {
			others = append(others, id)
		}
	}
	L, F := others[0], others[1]
	lb, fb, cb := c.brokers[L], c.brokers[F], c.brokers[ctrl]
	t.Logf("controller %d, replicas [leader %d, follower %d]", ctrl, L, F)
	const uncleanMetric = "kafka_controller_controllerstats_unclean_leader_elections_total"
	uncleanBefore := metric(t, cb, uncleanMetric)

	c.createAssigned("clean", []int32{L, F}, nil)
	c.createAssigned("dirty", []int32{L, F}, map[string]string{"unclean.leader.election.enable": "true"})
	topics := []string{"clean", "dirty"}
	epochs := map[string]int32{}
	for _, tp := range topics {
		if code, base := rawProduce(t, lb.Addr(), tp, 0, -1, 10*time.Second, "old-0", "old-1", "old-2"); code != 0 || base != 0 {
			t.Fatalf("%s: acks=all with ISR [%d %d]: %s at %d", tp, L, F, codeName(code), base)
		}
	}

	fb.Kill()
	for _, tp := range topics {
		c.waitFor(tp+": ISR = [leader]", sessionTimeout+20*time.Second, func() (bool, string) {
			s, _ := c.partitionState(tp, 0)
			return s.Leader == L && len(s.ISR) == 1, fmt.Sprintf("%+v", s)
		})
		// Acknowledged by the whole (shrunken) ISR: F never has them.
		if code, base := rawProduce(t, lb.Addr(), tp, 0, -1, 10*time.Second, "new-3", "new-4"); code != 0 || base != 3 {
			t.Fatalf("%s: acks=all with ISR [%d]: %s at %d, want NONE at 3", tp, L, codeName(code), base)
		}
	}

	lb.Kill()
	for _, tp := range topics {
		c.waitFor(tp+": offline (leader -1)", sessionTimeout+20*time.Second, func() (bool, string) {
			s, _ := c.partitionState(tp, 0)
			return s.Leader == -1 && !contains(s.ISR, F), fmt.Sprintf("%+v", s)
		})
		s, _ := c.partitionState(tp, 0)
		epochs[tp] = s.LeaderEpoch
	}

	c.waitUnregistered(F)
	fb.Start()
	c.waitFor("dirty: unclean election of the out-of-sync replica", 30*time.Second, func() (bool, string) {
		s, _ := c.partitionState("dirty", 0)
		return s.Leader == F && len(s.ISR) == 1 && s.ISR[0] == F && s.LeaderEpoch > epochs["dirty"], fmt.Sprintf("%+v", s)
	})
	// The controller decided "clean" in the same broker-change pass (topics
	// in name order, "clean" first), so its state is final here.
	if s, _ := c.partitionState("clean", 0); s.Leader != -1 || contains(s.ISR, F) {
		t.Fatalf("clean: out-of-sync replica %d brought back: state %+v, want leader -1 without it in the ISR", F, s)
	}
	for _, b := range []*harness.Broker{cb, fb} {
		c.waitFor("describe on "+b.Addr(), 20*time.Second, func() (bool, string) {
			cd, err := describe(t, b, "clean")
			if err != nil && !strings.Contains(err.Error(), kerr.LeaderNotAvailable.Message) {
				return false, err.Error()
			}
			dd, derr := describe(t, b, "dirty")
			if derr != nil {
				return false, derr.Error()
			}
			cp, dp := cd.Partitions[0], dd.Partitions[0]
			// As Kafka's ZooKeeper mode: no leader, the ISR keeps the last
			// member (dead, so also among the offline replicas), never F.
			ok := cp.Leader == -1 && !contains(cp.ISR, F) && contains(cp.OfflineReplicas, L) && dp.Leader == F && len(dp.ISR) == 1 && dp.ISR[0] == F
			desc := fmt.Sprintf("clean leader %d isr %v offline %v (%v); dirty leader %d isr %v", cp.Leader, cp.ISR, cp.OfflineReplicas, cp.Err, dp.Leader, dp.ISR)
			if ok {
				t.Logf("broker %s describes: %s", b.Addr(), desc)
			}
			return ok, desc
		})
	}
	if code, _ := rawProduce(t, fb.Addr(), "clean", 0, 1, 5*time.Second, "x"); code != kerr.NotLeaderForPartition.Code {
		t.Errorf("clean: produce to the non-leader %d answered %s, want NOT_LEADER_OR_FOLLOWER", F, codeName(code))
	}
	c.waitServing("dirty", 0, 20*time.Second)
	if end, _ := endOffset(t, fb.Addr(), "dirty", 0); end != 3 {
		t.Errorf("dirty: end offset %d on the unclean leader, want 3 (it has only the records before it fell out)", end)
	}
	if n := metric(t, cb, uncleanMetric) - uncleanBefore; n != 1 {
		t.Errorf("controller counted %v unclean elections, want 1", n)
	}

	c.waitUnregistered(L)
	lb.Start()
	c.waitFor("clean: the last ISR member leads again", 30*time.Second, func() (bool, string) {
		s, _ := c.partitionState("clean", 0)
		return s.Leader == L && s.LeaderEpoch > epochs["clean"], fmt.Sprintf("%+v", s)
	})
	c.waitServing("clean", 0, 20*time.Second)
	got := readPartition(t, []string{lb.Addr()}, "clean", 0, 5)
	for o, v := range []string{"old-0", "old-1", "old-2", "new-3", "new-4"} {
		if got[int64(o)] != v {
			t.Errorf("clean: offset %d holds %q, want %q (acknowledged)", o, got[int64(o)], v)
		}
	}
	// On dirty, L truncates new-3/new-4 (F's epoch ends at 3) and rejoins.
	c.waitFor("dirty: old leader back in the ISR", 30*time.Second, func() (bool, string) {
		s, _ := c.partitionState("dirty", 0)
		return s.Leader == F && contains(s.ISR, L), fmt.Sprintf("%+v", s)
	})
	if code, base := rawProduce(t, fb.Addr(), "dirty", 0, -1, 10*time.Second, "later-3"); code != 0 || base != 3 {
		t.Fatalf("dirty: acks=all after L rejoined: %s at %d, want NONE at 3", codeName(code), base)
	}
	got = readPartition(t, []string{fb.Addr()}, "dirty", 0, 4)
	for o, v := range []string{"old-0", "old-1", "old-2", "later-3"} {
		if got[int64(o)] != v {
			t.Errorf("dirty: offset %d holds %q, want %q", o, got[int64(o)], v)
		}
	}
}
