package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// onBroker sends req to the broker at addr itself (not routed by the
// client to the controller or any other broker) and returns its response.
func onBroker[R kmsg.Response](t *testing.T, addr string, req kmsg.Request) R {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatalf("%T to %s: %v", req, addr, err)
	}
	return resp.(R)
}

// topicConfigsOn is DescribeConfigs of topic asked of broker addr: its
// error code and every config's value and source.
func topicConfigsOn(t *testing.T, addr, topic string) (int16, map[string]string, map[string]kmsg.ConfigSource) {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	req.Resources = append(req.Resources, r)
	resp := onBroker[*kmsg.DescribeConfigsResponse](t, addr, req)
	if len(resp.Resources) != 1 {
		t.Fatalf("DescribeConfigs on %s: %+v", addr, resp)
	}
	vals, srcs := map[string]string{}, map[string]kmsg.ConfigSource{}
	for _, c := range resp.Resources[0].Configs {
		if c.Value != nil {
			vals[c.Name] = *c.Value
		}
		srcs[c.Name] = c.Source
	}
	return resp.Resources[0].ErrorCode, vals, srcs
}

// incrementalSet is IncrementalAlterConfigs SET k=v on topic, sent to addr.
func incrementalSet(t *testing.T, addr, topic, k, v string) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = k, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(v)
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	resp := onBroker[*kmsg.IncrementalAlterConfigsResponse](t, addr, req)
	if len(resp.Resources) != 1 {
		t.Fatalf("IncrementalAlterConfigs on %s: %+v", addr, resp)
	}
	msg := ""
	if m := resp.Resources[0].ErrorMessage; m != nil {
		msg = *m
	}
	return resp.Resources[0].ErrorCode, msg
}

// TestTopicConfigsOnEveryBroker: as in Kafka's ZooKeeper mode, a broker
// that is neither the controller nor the partition's leader describes a
// topic's configs from ZooKeeper and alters them (IncrementalAlterConfigs
// and the legacy AlterConfigs); the leader applies each change from the
// /config/changes notification (min.insync.replicas above the ISR size
// refuses acks=all, removing it accepts again), every broker describes the
// new value, and `kafka-configs.sh --zookeeper` writes the same way.
func TestTopicConfigsOnEveryBroker(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	ctrl := c.controllerID()
	var others []int32
	for _, id := range []int32{1, 2, 3} {
		if id != ctrl {
			others = append(others, id)
		}
	}
	L, N := others[0], others[1] // leader; neither leader nor controller
	lb, nb := c.brokers[L], c.brokers[N]
	t.Logf("controller %d, leader %d, plain broker %d", ctrl, L, N)
	c.createAssigned("cfg", []int32{L, N, ctrl}, map[string]string{"retention.ms": "3600000"})

	for _, id := range []int32{N, L, ctrl} {
		code, vals, srcs := topicConfigsOn(t, c.brokers[id].Addr(), "cfg")
		if code != 0 || vals["retention.ms"] != "3600000" || srcs["retention.ms"] != kmsg.ConfigSourceDynamicTopicConfig || vals["min.insync.replicas"] != "1" {
			t.Fatalf("DescribeConfigs on broker %d: %s retention.ms=%q (%v) min.insync.replicas=%q", id, codeName(code), vals["retention.ms"], srcs["retention.ms"], vals["min.insync.replicas"])
		}
	}
	if code, _, _ := topicConfigsOn(t, nb.Addr(), "nope"); code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("DescribeConfigs of a missing topic on broker %d: %s", N, codeName(code))
	}
	if code, base := rawProduce(t, lb.Addr(), "cfg", 0, -1, 10*time.Second, "a"); code != 0 || base != 0 {
		t.Fatalf("acks=all before the change: %s at %d", codeName(code), base)
	}

	if code, msg := incrementalSet(t, nb.Addr(), "cfg", "min.insync.replicas", "4"); code != 0 {
		t.Fatalf("IncrementalAlterConfigs on broker %d: %s %s", N, codeName(code), msg)
	}
	if code, msg := incrementalSet(t, nb.Addr(), "cfg", "retention.ms", "soon"); code != kerr.InvalidConfig.Code {
		t.Fatalf("bad value on broker %d: %s %s, want INVALID_CONFIG", N, codeName(code), msg)
	}
	c.waitFor("the leader to apply min.insync.replicas=4", 20*time.Second, func() (bool, string) {
		code, _ := rawProduce(t, lb.Addr(), "cfg", 0, -1, 5*time.Second, "b")
		return code == kerr.NotEnoughReplicas.Code, codeName(code)
	})
	for _, id := range []int32{N, L, ctrl} {
		if code, vals, _ := topicConfigsOn(t, c.brokers[id].Addr(), "cfg"); code != 0 || vals["min.insync.replicas"] != "4" || vals["retention.ms"] != "3600000" {
			t.Fatalf("broker %d describes %s min.insync.replicas=%q retention.ms=%q", id, codeName(code), vals["min.insync.replicas"], vals["retention.ms"])
		}
	}

	// Legacy AlterConfigs replaces the overrides: min.insync.replicas is gone.
	areq := kmsg.NewPtrAlterConfigsRequest()
	ar := kmsg.NewAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeTopic, "cfg"
	ac := kmsg.NewAlterConfigsRequestResourceConfig()
	ac.Name, ac.Value = "retention.ms", kmsg.StringPtr("7200000")
	ar.Configs = append(ar.Configs, ac)
	areq.Resources = append(areq.Resources, ar)
	if resp := onBroker[*kmsg.AlterConfigsResponse](t, nb.Addr(), areq); resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("AlterConfigs on broker %d: %s", N, codeName(resp.Resources[0].ErrorCode))
	}
	c.waitFor("the leader to fall back to min.insync.replicas=1", 20*time.Second, func() (bool, string) {
		code, _ := rawProduce(t, lb.Addr(), "cfg", 0, -1, 5*time.Second, "c")
		return code == 0, codeName(code)
	})

	// kafka-configs.sh --zookeeper writes ZooKeeper directly; the brokers follow.
	code, out, errs := script(t, "kafka-configs.sh", "--zookeeper", c.connect, "--entity-type", "topics", "--entity-name", "cfg", "--alter", "--add-config", "min.insync.replicas=4")
	if code != 0 || out != "Completed updating config for entity: topic 'cfg'.\n" {
		t.Fatalf("configs --zookeeper --alter: %d %q %q", code, out, errs)
	}
	code, out, errs = script(t, "kafka-configs.sh", "--zookeeper", c.connect, "--entity-type", "topics", "--entity-name", "cfg", "--describe")
	if code != 0 || out != "Configs for topic 'cfg' are min.insync.replicas=4,retention.ms=7200000\n" {
		t.Fatalf("configs --zookeeper --describe: %d %q %q", code, out, errs)
	}
	c.waitFor("the leader to apply the tool's min.insync.replicas=4", 20*time.Second, func() (bool, string) {
		code, _ := rawProduce(t, lb.Addr(), "cfg", 0, -1, 5*time.Second, "d")
		return code == kerr.NotEnoughReplicas.Code, codeName(code)
	})
	code, out, errs = script(t, "kafka-configs.sh", "--zookeeper", c.connect, "--entity-type", "topics", "--entity-name", "cfg", "--alter", "--delete-config", "flush.ms")
	if code != 1 || !strings.Contains(errs, "Invalid config(s): flush.ms") {
		t.Fatalf("configs --zookeeper deleting an absent override: %d %q %q", code, out, errs)
	}
	if code, vals, _ := topicConfigsOn(t, nb.Addr(), "cfg"); code != 0 || vals["min.insync.replicas"] != "4" {
		t.Fatalf("broker %d after the tool: %s min.insync.replicas=%q", N, codeName(code), vals["min.insync.replicas"])
	}
	// kafka-topics.sh --describe asks any broker for the configs: each one
	// answers with the overrides.
	for _, id := range []int32{N, L} {
		code, out, errs = script(t, "kafka-topics.sh", "--describe", "--bootstrap-server", c.brokers[id].Addr(), "--topic", "cfg")
		if code != 0 || !strings.Contains(out, "min.insync.replicas=4") || !strings.Contains(out, "retention.ms=7200000") {
			t.Fatalf("topics --describe via broker %d: %d %q %q", id, code, out, errs)
		}
	}
}

// TestUncleanElectionEnabledByConfig: a partition left without a leader
// (its last ISR member L dead, the out-of-sync replica F back, unclean
// election off) gets F as leader as soon as
// unclean.leader.election.enable=true is set for the topic through a
// broker that is not the controller (Kafka's controller reacts to the
// topic config change; no broker change is needed).
func TestUncleanElectionEnabledByConfig(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	ctrl := c.controllerID()
	var others []int32
	for _, id := range []int32{1, 2, 3} {
		if id != ctrl {
			others = append(others, id)
		}
	}
	L, F := others[0], others[1]
	lb, fb := c.brokers[L], c.brokers[F]
	c.createAssigned("u", []int32{L, F}, nil)
	if code, _ := rawProduce(t, lb.Addr(), "u", 0, -1, 10*time.Second, "old-0"); code != 0 {
		t.Fatalf("acks=all: %s", codeName(code))
	}
	fb.Kill()
	c.waitFor("ISR = [leader]", sessionTimeout+20*time.Second, func() (bool, string) {
		s, _ := c.partitionState("u", 0)
		return s.Leader == L && len(s.ISR) == 1, fmt.Sprintf("%+v", s)
	})
	if code, base := rawProduce(t, lb.Addr(), "u", 0, -1, 10*time.Second, "new-1"); code != 0 || base != 1 {
		t.Fatalf("acks=all with ISR [%d]: %s at %d", L, codeName(code), base)
	}
	lb.Kill()
	c.waitFor("offline (leader -1)", sessionTimeout+20*time.Second, func() (bool, string) {
		s, _ := c.partitionState("u", 0)
		return s.Leader == -1, fmt.Sprintf("%+v", s)
	})
	before, _ := c.partitionState("u", 0)
	c.waitUnregistered(F)
	fb.Start()
	c.waitFor("F registered", 30*time.Second, func() (bool, string) {
		return len(c.registered()) == 2, fmt.Sprint(c.registered())
	})
	// The controller handles F's return with unclean election off: no leader.
	c.waitFor("the controller to see F back", 30*time.Second, func() (bool, string) {
		d, err := describe(t, c.brokers[ctrl], "u")
		if err != nil && !strings.Contains(err.Error(), kerr.LeaderNotAvailable.Message) {
			return false, err.Error()
		}
		if len(d.Partitions) != 1 {
			return false, fmt.Sprintf("%+v", d)
		}
		p := d.Partitions[0]
		return !contains(p.OfflineReplicas, F), fmt.Sprintf("leader %d offline %v", p.Leader, p.OfflineReplicas)
	})
	if s, _ := c.partitionState("u", 0); s.Leader != -1 {
		t.Fatalf("leader %d elected with unclean election off: %+v", s.Leader, s)
	}

	if code, msg := incrementalSet(t, fb.Addr(), "u", "unclean.leader.election.enable", "true"); code != 0 {
		t.Fatalf("IncrementalAlterConfigs on broker %d: %s %s", F, codeName(code), msg)
	}
	c.waitFor("unclean election of F", 30*time.Second, func() (bool, string) {
		s, _ := c.partitionState("u", 0)
		return s.Leader == F && len(s.ISR) == 1 && s.ISR[0] == F && s.LeaderEpoch > before.LeaderEpoch, fmt.Sprintf("%+v", s)
	})
	c.waitServing("u", 0, 20*time.Second)
	if end, _ := endOffset(t, fb.Addr(), "u", 0); end != 1 {
		t.Errorf("end offset %d on the unclean leader, want 1 (new-1 was only on %d)", end, L)
	}
}
