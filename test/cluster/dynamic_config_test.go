package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/zkmeta"
)

// brokerConfigOn is DescribeConfigs (with synonyms) of broker id's own
// config name, asked of that broker: its value, source and synonyms as
// "SOURCE:name=value".
func brokerConfigOn(t *testing.T, addr string, id int32, name string) (string, kmsg.ConfigSource, []string) {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = kmsg.ConfigResourceTypeBroker, fmt.Sprint(id), []string{name}
	req.Resources = append(req.Resources, r)
	resp := onBroker[*kmsg.DescribeConfigsResponse](t, addr, req)
	if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 || len(resp.Resources[0].Configs) != 1 {
		t.Fatalf("DescribeConfigs of broker %d: %+v", id, resp)
	}
	c := resp.Resources[0].Configs[0]
	var syn []string
	for _, s := range c.ConfigSynonyms {
		sv := "null"
		if s.Value != nil {
			sv = *s.Value
		}
		syn = append(syn, fmt.Sprintf("%s:%s=%s", s.Source, s.Name, sv))
	}
	v := ""
	if c.Value != nil {
		v = *c.Value
	}
	return v, c.Source, syn
}

// TestDynamicBrokerDefaultsReachEveryBroker: kafka-configs --entity-default
// message.max.bytes, sent to one broker, is written to
// /config/brokers/<default>, announced through /config/changes and applied
// by all three brokers (each describes it as DYNAMIC_DEFAULT_BROKER_CONFIG
// and refuses a record above it for the partition it leads); a per-broker
// value on broker 2 then overrides the default there only.
func TestDynamicBrokerDefaultsReachEveryBroker(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	const topic = "sizes"
	// One partition led by each broker (replication factor 1: the leader
	// alone decides).
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, -1, -1
	for p := int32(0); p < 3; p++ {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = p, []int32{p + 1}
		ct.ReplicaAssignment = append(ct.ReplicaAssignment, a)
	}
	create.Topics = append(create.Topics, ct)
	cresp, err := create.RequestWith(ctx, c.client())
	if err != nil || cresp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, cresp)
	}
	c.waitFor("a leader for every partition", 30*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			if s, ok := c.partitionState(topic, p); !ok || s.Leader != p+1 {
				return false, fmt.Sprintf("partition %d: %+v", p, s)
			}
		}
		return true, ""
	})
	cl := c.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(3), kgo.ProducerBatchMaxBytes(4<<20),
		kgo.ProducerBatchCompression(kgo.NoCompression())) // the batch size is the record size
	big := []byte(strings.Repeat("x", 3000))
	produce := func(p int32) error {
		pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
		defer pcancel()
		return cl.ProduceSync(pctx, &kgo.Record{Topic: topic, Partition: p, Value: big}).FirstErr()
	}
	for p := int32(0); p < 3; p++ {
		if err := produce(p); err != nil {
			t.Fatalf("partition %d before any dynamic config: %v", p, err)
		}
	}

	code, out, errs := script(t, "kafka-configs.sh", "--bootstrap-server", c.brokers[3].Addr(), "--entity-type", "brokers", "--entity-default",
		"--alter", "--add-config", "message.max.bytes=2048")
	if code != 0 || strings.TrimSpace(out) != "Completed updating default config for brokers in the cluster." {
		t.Fatalf("alter default: %d %q %q", code, out, errs)
	}
	data, _, err := c.store.Get(zkmeta.BrokerConfigPath("<default>"))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := zkmeta.DecodeConfig(data); err != nil || m["message.max.bytes"] != "2048" || len(m) != 1 {
		t.Fatalf("/config/brokers/<default>: %s %v", data, err)
	}
	for id := int32(1); id <= 3; id++ {
		addr := c.brokers[id].Addr()
		c.waitFor(fmt.Sprintf("broker %d applies the default", id), 30*time.Second, func() (bool, string) {
			v, src, syn := brokerConfigOn(t, addr, id, "message.max.bytes")
			return v == "2048" && src == kmsg.ConfigSourceDynamicDefaultBrokerConfig, fmt.Sprint(v, src, syn)
		})
		_, _, syn := brokerConfigOn(t, addr, id, "message.max.bytes")
		if strings.Join(syn, " ") != "DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=2048 DEFAULT_CONFIG:message.max.bytes=1048588" {
			t.Fatalf("broker %d synonyms %v", id, syn)
		}
	}
	// Each leader now refuses the 3000-byte record (the topic has no
	// max.message.bytes of its own); its partitions take the new default
	// just after describe shows it (controller.DefaultsChanged).
	for p := int32(0); p < 3; p++ {
		c.waitFor(fmt.Sprintf("leader %d refuses the big record", p+1), 30*time.Second, func() (bool, string) {
			err := produce(p)
			return errors.Is(err, kerr.MessageTooLarge), fmt.Sprint(err)
		})
	}

	// Broker 2's own value wins there; brokers 1 and 3 keep the default.
	code, out, errs = script(t, "kafka-configs.sh", "--bootstrap-server", c.brokers[1].Addr(), "--entity-type", "brokers", "--entity-name", "2",
		"--alter", "--add-config", "message.max.bytes=1048588")
	if code != 0 || strings.TrimSpace(out) != "Completed updating config for broker 2." {
		t.Fatalf("alter broker 2: %d %q %q", code, out, errs)
	}
	c.waitFor("broker 2 applies its own value", 30*time.Second, func() (bool, string) {
		v, src, syn := brokerConfigOn(t, c.brokers[2].Addr(), 2, "message.max.bytes")
		return v == "1048588" && src == kmsg.ConfigSourceDynamicBrokerConfig &&
			strings.Join(syn, " ") == "DYNAMIC_BROKER_CONFIG:message.max.bytes=1048588 DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=2048 DEFAULT_CONFIG:message.max.bytes=1048588", fmt.Sprint(v, src, syn)
	})
	c.waitFor("broker 2 takes the big record", 30*time.Second, func() (bool, string) {
		err := produce(1)
		return err == nil, fmt.Sprint(err)
	})
	for _, p := range []int32{0, 2} {
		if err := produce(p); !errors.Is(err, kerr.MessageTooLarge) {
			t.Fatalf("partition %d (leader %d) after broker 2's override: %v, want MESSAGE_TOO_LARGE", p, p+1, err)
		}
		if v, src, _ := brokerConfigOn(t, c.brokers[p+1].Addr(), p+1, "message.max.bytes"); v != "2048" || src != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
			t.Fatalf("broker %d after broker 2's override: %s %v", p+1, v, src)
		}
	}
	// The topic describes the value of the broker asked.
	for id := int32(1); id <= 3; id++ {
		_, vals, _ := topicConfigsOn(t, c.brokers[id].Addr(), topic)
		want := "2048"
		if id == 2 {
			want = "1048588"
		}
		if vals["max.message.bytes"] != want {
			t.Errorf("max.message.bytes of %s described by broker %d: %s, want %s", topic, id, vals["max.message.bytes"], want)
		}
	}
}

// fetcherIndexOf is Kafka's AbstractFetcherManager.getFetcherId for an
// ASCII topic name: abs(31*hashCode(topic) + partition) % n.
func fetcherIndexOf(topic string, p int32, n int) int {
	h := int32(0)
	for _, c := range []byte(topic) {
		h = 31*h + int32(c)
	}
	v := 31*h + p
	if v < 0 {
		v = -v
		if v < 0 {
			v = 0
		}
	}
	return int(v) % n
}

// fetcherActors lists the fetcher actors of a broker (GET /actors on its
// admin listener) by name, "fetcher-<leader>-<index>".
func fetcherActors(t *testing.T, admin string) []string {
	t.Helper()
	resp, err := http.Get(admin + "/actors?kind=fetcher")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct {
		Path string `json:"path"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range list {
		out = append(out, strings.TrimPrefix(a.Path, "fetcher-manager/"))
	}
	sort.Strings(out)
	return out
}

// TestDynamicReplicaFetchers: num.replica.fetchers raised to 2 as the
// cluster-wide dynamic default resizes every broker's fetcher pool at run
// time (the fetchers running are those Kafka's hash picks among two for the
// partitions each broker follows), replication goes on (acks=all with
// min.insync.replicas=3 needs every follower), and a value more than double
// the current one is refused with Kafka's message.
func TestDynamicReplicaFetchers(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	const topic = "fetched"
	minIsr := "3"
	c.createTopic(topic, 12, 3, map[string]*string{"min.insync.replicas": &minIsr})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl := c.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceAll := func(round int) {
		t.Helper()
		for p := int32(0); p < 12; p++ {
			pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
			err := cl.ProduceSync(pctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("r%d", round))}).FirstErr()
			pcancel()
			if err != nil {
				t.Fatalf("round %d partition %d: %v", round, p, err)
			}
		}
	}
	// wantFetchers is the set of fetchers broker id runs with n per leader.
	wantFetchers := func(id int32, n int) []string {
		set := map[string]bool{}
		for p := int32(0); p < 12; p++ {
			s, ok := c.partitionState(topic, p)
			if !ok {
				t.Fatalf("no state for partition %d", p)
			}
			if s.Leader != id {
				set[fmt.Sprintf("fetcher-%d-%d", s.Leader, fetcherIndexOf(topic, p, n))] = true
			}
		}
		// The internal topics' followers have fetchers too: only this topic's
		// are compared (the cluster has no other topic yet).
		return slices.Sorted(maps.Keys(set))
	}
	produceAll(0)
	for id := int32(1); id <= 3; id++ {
		if got, want := fetcherActors(t, c.admins[id]), wantFetchers(id, 1); !slices.Equal(got, want) {
			t.Fatalf("broker %d fetchers %v, want %v", id, got, want)
		}
	}

	code, out, errs := script(t, "kafka-configs.sh", "--bootstrap-server", c.brokers[1].Addr(), "--entity-type", "brokers", "--entity-default",
		"--alter", "--add-config", "num.replica.fetchers=2")
	if code != 0 || strings.TrimSpace(out) != "Completed updating default config for brokers in the cluster." {
		t.Fatalf("alter: %d %q %q", code, out, errs)
	}
	for id := int32(1); id <= 3; id++ {
		want := wantFetchers(id, 2)
		if len(want) <= len(wantFetchers(id, 1)) {
			t.Fatalf("broker %d: two fetchers per leader change nothing (%v): pick other partitions", id, want)
		}
		c.waitFor(fmt.Sprintf("broker %d runs two fetchers per leader", id), 30*time.Second, func() (bool, string) {
			got := fetcherActors(t, c.admins[id])
			return slices.Equal(got, want), fmt.Sprint(got, " want ", want)
		})
		if v, src, _ := brokerConfigOn(t, c.brokers[id].Addr(), id, "num.replica.fetchers"); v != "2" || src != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
			t.Fatalf("broker %d describes num.replica.fetchers=%s %v", id, v, src)
		}
	}
	for round := 1; round <= 3; round++ {
		produceAll(round)
	}
	for p := int32(0); p < 12; p++ {
		if s, _ := c.partitionState(topic, p); len(s.ISR) != 3 {
			t.Fatalf("partition %d ISR %v after the resize", p, s.ISR)
		}
	}

	code, out, errs = script(t, "kafka-configs.sh", "--bootstrap-server", c.brokers[2].Addr(), "--entity-type", "brokers", "--entity-name", "2",
		"--alter", "--add-config", "num.replica.fetchers=5")
	if code == 0 || !strings.Contains(errs+out, "Dynamic thread count update validation failed for num.replica.fetchers=5, value should not be greater than double the current value 2") {
		t.Fatalf("num.replica.fetchers=5 over 2: %d %q %q", code, out, errs)
	}
	if _, _, err := c.store.Get(zkmeta.BrokerConfigPath("2")); err == nil {
		t.Fatal("/config/brokers/2 written by a refused alter")
	}
}
