package handlers

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/config"
	"gregor/partition"
	"gregor/replication/controller"
	"gregor/replication/metastore"
	"gregor/storage"
	"gregor/wire"
)

// nopRM is a replica manager that accepts everything.
type nopRM struct {
	mu      sync.Mutex
	configs map[string]storage.LogConfig
}

func (*nopRM) ApplyLeaderAndIsr([]partition.LeaderAndIsr) map[partition.TopicPartition]error {
	return nil
}
func (*nopRM) StopReplicas([]partition.TopicPartition, bool) error { return nil }
func (r *nopRM) UpdateConfig(topic string, cfg storage.LogConfig) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.configs[topic] = cfg
}

// adminBroker is a handlers.Broker over a real controller on the embedded
// store (in a temp dir) with a replica manager that accepts everything.
func adminBroker(t *testing.T, mut func(*config.Broker)) (*Broker, *nopRM) {
	t.Helper()
	cfg, err := config.Parse(map[string]string{
		"broker.id":                      "1",
		"num.partitions":                 "2",
		"listeners":                      "PLAINTEXT://:9092,INTERNAL://:9093",
		"advertised.listeners":           "PLAINTEXT://127.0.0.1:9092,INTERNAL://10.0.0.1:9093",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
		"log.retention.hours":            "24",
		"ssl.keystore.password":          "hunter2",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mut != nil {
		mut(cfg)
	}
	store, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rm := &nopRM{configs: map[string]storage.LogConfig{}}
	c := controller.New(store, rm, cfg, controller.Options{})
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); store.Close() })
	return &Broker{Config: cfg, Log: zap.NewNop(), Topics: c}, rm
}

// call runs a request through Broker.Handle like the server does, waits
// for the answer (bounded) and checks it encodes and decodes at the
// request's version.
func call[R kmsg.Response](t *testing.T, b *Broker, req kmsg.Request, listener string) R {
	t.Helper()
	rc := &wire.RequestContext{Key: req.Key(), Version: req.GetVersion(), Listener: listener}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, ok := b.Handle(rc, req).Resolve(ctx)
	if !ok || resp.Msg == nil {
		t.Fatalf("key %d v%d: no response", req.Key(), req.GetVersion())
	}
	resp.Msg.SetVersion(req.GetVersion())
	back := resp.Msg.(kmsg.Response)
	fresh := kmsg.ResponseForKey(req.Key())
	fresh.SetVersion(req.GetVersion())
	if err := fresh.ReadFrom(back.AppendTo(nil)); err != nil {
		t.Fatalf("key %d v%d: response does not round-trip: %v", req.Key(), req.GetVersion(), err)
	}
	return resp.Msg.(R)
}

func createTopicsReq(v int16, validate bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = v
	req.ValidateOnly = validate
	req.Topics = topics
	return req
}

func newTopic(name string, parts int32, rf int16, cfg map[string]string) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, parts, rf
	for k, v := range cfg {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name = k
		c.Value = kmsg.StringPtr(v)
		t.Configs = append(t.Configs, c)
	}
	return t
}

func TestCreateTopicsVersions(t *testing.T) {
	b, _ := adminBroker(t, nil)
	// v0: no validate_only, no messages.
	resp := call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(0, false, newTopic("a", 3, 1, nil), newTopic("bad!", 1, 1, nil)), "PLAINTEXT")
	if len(resp.Topics) != 2 || resp.Topics[0].ErrorCode != 0 || resp.Topics[1].ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("v0 %+v", resp.Topics)
	}
	// v7: defaults (-1), configs echoed, topic id, messages, duplicates.
	resp = call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(7, false,
		newTopic("b", -1, -1, map[string]string{"retention.ms": "1000"}),
		newTopic("a", 1, 1, nil),
		newTopic("dup", 1, 1, nil), newTopic("dup", 1, 1, nil),
		newTopic("rf", 1, 2, nil),
	), "PLAINTEXT")
	got := resp.Topics
	if got[0].ErrorCode != 0 || got[0].NumPartitions != 2 || got[0].ReplicationFactor != 1 || got[0].TopicID == ([16]byte{}) {
		t.Fatalf("b: %+v", got[0])
	}
	cfgs := map[string]kmsg.CreateTopicsResponseTopicConfig{}
	for _, c := range got[0].Configs {
		cfgs[c.Name] = c
	}
	if c := cfgs["retention.ms"]; *c.Value != "1000" || c.Source != int8(kmsg.ConfigSourceDynamicTopicConfig) {
		t.Fatalf("retention.ms %+v", c)
	}
	if c := cfgs["cleanup.policy"]; *c.Value != "delete" || c.Source != int8(kmsg.ConfigSourceDefaultConfig) {
		t.Fatalf("cleanup.policy %+v", c)
	}
	if got[1].ErrorCode != kerr.TopicAlreadyExists.Code || *got[1].ErrorMessage != "Topic 'a' already exists." || got[1].NumPartitions != -1 {
		t.Fatalf("a: %+v", got[1])
	}
	if got[2].ErrorCode != kerr.InvalidRequest.Code || got[3].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("dup: %+v %+v", got[2], got[3])
	}
	if got[4].ErrorCode != kerr.InvalidReplicationFactor.Code {
		t.Fatalf("rf: %+v", got[4])
	}
	// validate_only (v1+) creates nothing.
	resp = call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(1, true, newTopic("v", 1, 1, nil)), "PLAINTEXT")
	if resp.Topics[0].ErrorCode != 0 || b.Topics.Snapshot().Topics["v"] != nil {
		t.Fatalf("validate only: %+v", resp.Topics[0])
	}
}

func metadataReq(v int16, auto bool, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = v
	req.AllowAutoTopicCreation = auto
	if topics != nil {
		req.Topics = []kmsg.MetadataRequestTopic{}
	}
	for _, n := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func TestMetadataVersions(t *testing.T) {
	b, _ := adminBroker(t, nil)
	call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(4, false, newTopic("m", 2, 1, nil), newTopic("n", 1, 1, nil)), "PLAINTEXT")
	id := b.Topics.Snapshot().Topics["m"].ID

	// v0: an empty list means all topics.
	r0 := call[*kmsg.MetadataResponse](t, b, metadataReq(0, false, []string{}...), "PLAINTEXT")
	if len(r0.Topics) != 2 || *r0.Topics[0].Topic != "m" || len(r0.Topics[0].Partitions) != 2 {
		t.Fatalf("v0 all: %+v", r0.Topics)
	}
	if len(r0.Brokers) != 1 || r0.Brokers[0].NodeID != 1 || r0.Brokers[0].Host != "127.0.0.1" || r0.Brokers[0].Port != 9092 {
		t.Fatalf("v0 brokers %+v", r0.Brokers)
	}
	// v12: null = all; empty = none; listener-specific address; ids.
	all := metadataReq(12, false)
	r := call[*kmsg.MetadataResponse](t, b, all, "INTERNAL")
	if len(r.Topics) != 2 || r.Brokers[0].Host != "10.0.0.1" || r.Brokers[0].Port != 9093 {
		t.Fatalf("v12 all: %d topics, brokers %+v", len(r.Topics), r.Brokers)
	}
	if r.ClusterID == nil || len(*r.ClusterID) != 22 || r.ControllerID != 1 {
		t.Fatalf("v12 cluster %v controller %d", r.ClusterID, r.ControllerID)
	}
	p := r.Topics[0].Partitions[1]
	if r.Topics[0].TopicID != id || p.Leader != 1 || p.LeaderEpoch != 0 || !reflect.DeepEqual(p.ISR, []int32{1}) ||
		!reflect.DeepEqual(p.Replicas, []int32{1}) || len(p.OfflineReplicas) != 0 || r.Topics[0].AuthorizedOperations != -2147483648 {
		t.Fatalf("v12 topic %+v", r.Topics[0])
	}
	if r := call[*kmsg.MetadataResponse](t, b, metadataReq(12, false, []string{}...), "PLAINTEXT"); len(r.Topics) != 0 {
		t.Fatalf("v12 empty list returned %d topics", len(r.Topics))
	}
	// By id (v10+), including an unknown id.
	byID := metadataReq(12, false, []string{}...)
	byID.Topics = []kmsg.MetadataRequestTopic{{TopicID: id}, {TopicID: [16]byte{9}}}
	r = call[*kmsg.MetadataResponse](t, b, byID, "PLAINTEXT")
	if len(r.Topics) != 2 || *r.Topics[0].Topic != "m" || r.Topics[1].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("by id %+v", r.Topics)
	}
}

func TestMetadataAutoCreate(t *testing.T) {
	b, _ := adminBroker(t, nil)
	// v4+ without AllowAutoTopicCreation: unknown.
	r := call[*kmsg.MetadataResponse](t, b, metadataReq(9, false, "x"), "PLAINTEXT")
	if r.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("no auto: %+v", r.Topics[0])
	}
	// Allowed: first answer LEADER_NOT_AVAILABLE, next lists it.
	r = call[*kmsg.MetadataResponse](t, b, metadataReq(9, true, "x", "bad name"), "PLAINTEXT")
	if r.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code || r.Topics[1].ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("auto create: %+v", r.Topics)
	}
	r = call[*kmsg.MetadataResponse](t, b, metadataReq(9, true, "x"), "PLAINTEXT")
	if r.Topics[0].ErrorCode != 0 || len(r.Topics[0].Partitions) != 2 || r.Topics[0].Partitions[0].Leader != 1 {
		t.Fatalf("after auto create: %+v", r.Topics[0])
	}
	// v0-3 always allow (broker setting permitting).
	r = call[*kmsg.MetadataResponse](t, b, metadataReq(1, false, "old"), "PLAINTEXT")
	if r.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code {
		t.Fatalf("v1 auto: %+v", r.Topics[0])
	}

	off, _ := adminBroker(t, func(c *config.Broker) { c.AutoCreateTopicsEnable = false })
	r = call[*kmsg.MetadataResponse](t, off, metadataReq(1, true, "y"), "PLAINTEXT")
	if r.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || off.Topics.Snapshot().Topics["y"] != nil {
		t.Fatalf("auto.create.topics.enable=false: %+v", r.Topics[0])
	}
}

func TestDeleteTopicsVersions(t *testing.T) {
	b, _ := adminBroker(t, nil)
	call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(4, false, newTopic("d0", 1, 1, nil), newTopic("d6", 1, 1, nil), newTopic("d6id", 1, 1, nil)), "PLAINTEXT")
	id := b.Topics.Snapshot().Topics["d6id"].ID

	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TopicNames = []string{"d0", "nope"}
	r := call[*kmsg.DeleteTopicsResponse](t, b, req, "PLAINTEXT")
	if r.Topics[0].ErrorCode != 0 || r.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("v0 %+v", r.Topics)
	}
	req = kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("d6")}, {TopicID: id}, {TopicID: [16]byte{7}}}
	r = call[*kmsg.DeleteTopicsResponse](t, b, req, "PLAINTEXT")
	if r.Topics[0].ErrorCode != 0 || r.Topics[1].ErrorCode != 0 || *r.Topics[1].Topic != "d6id" || r.Topics[1].TopicID != id ||
		r.Topics[2].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("v6 %+v", r.Topics)
	}
	if n := len(b.Topics.Snapshot().Topics); n != 0 {
		t.Fatalf("%d topics left", n)
	}
	// Neither a name nor an id: Kafka's authorizer filter skips the null
	// name, so the entry is TOPIC_AUTHORIZATION_FAILED (no authorizer
	// here), null name, zero id, no message; the named entry is answered
	// as usual.
	req.Topics = []kmsg.DeleteTopicsRequestTopic{{}, {Topic: kmsg.StringPtr("gone")}}
	r = call[*kmsg.DeleteTopicsResponse](t, b, req, "PLAINTEXT")
	if len(r.Topics) != 2 || r.Topics[0].Topic != nil || r.Topics[0].TopicID != ([16]byte{}) || r.Topics[0].ErrorCode != kerr.TopicAuthorizationFailed.Code ||
		r.Topics[0].ErrorMessage != nil || r.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("neither name nor id: %+v", r.Topics)
	}

	off, _ := adminBroker(t, func(c *config.Broker) { c.DeleteTopicEnable = false })
	call[*kmsg.CreateTopicsResponse](t, off, createTopicsReq(4, false, newTopic("k", 1, 1, nil)), "PLAINTEXT")
	req = kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 5
	req.TopicNames = []string{"k"}
	r = call[*kmsg.DeleteTopicsResponse](t, off, req, "PLAINTEXT")
	if r.Topics[0].ErrorCode != kerr.TopicDeletionDisabled.Code {
		t.Fatalf("disabled %+v", r.Topics)
	}
}

func TestCreatePartitionsVersions(t *testing.T) {
	b, _ := adminBroker(t, nil)
	call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(4, false, newTopic("p", 1, 1, nil)), "PLAINTEXT")
	for _, v := range []int16{0, 3} {
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.Version = v
		up := kmsg.NewCreatePartitionsRequestTopic()
		up.Topic, up.Count = "p", int32(2+v)
		down := kmsg.NewCreatePartitionsRequestTopic()
		down.Topic, down.Count = "missing", 3
		req.Topics = []kmsg.CreatePartitionsRequestTopic{up, down}
		r := call[*kmsg.CreatePartitionsResponse](t, b, req, "PLAINTEXT")
		if r.Topics[0].ErrorCode != 0 || r.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("v%d %+v", v, r.Topics)
		}
	}
	if n := len(b.Topics.Snapshot().Topics["p"].Partitions); n != 5 {
		t.Fatalf("partitions %d", n)
	}
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version = 3
	same := kmsg.NewCreatePartitionsRequestTopic()
	same.Topic, same.Count = "p", 5
	req.Topics = []kmsg.CreatePartitionsRequestTopic{same}
	r := call[*kmsg.CreatePartitionsResponse](t, b, req, "PLAINTEXT")
	if r.Topics[0].ErrorCode != kerr.InvalidPartitions.Code || *r.Topics[0].ErrorMessage != "Topic already has 5 partitions." {
		t.Fatalf("same count %+v", r.Topics[0])
	}
}

func describeReq(v int16, synonyms, docs bool, rs ...kmsg.DescribeConfigsRequestResource) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = v
	req.IncludeSynonyms, req.IncludeDocumentation = synonyms, docs
	req.Resources = rs
	return req
}

func resource(t kmsg.ConfigResourceType, name string, names ...string) kmsg.DescribeConfigsRequestResource {
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = t, name
	r.ConfigNames = names
	return r
}

func TestDescribeConfigsVersions(t *testing.T) {
	b, _ := adminBroker(t, nil)
	call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(4, false, newTopic("c", 1, 1, map[string]string{"segment.bytes": "1048576"})), "PLAINTEXT")

	r0 := call[*kmsg.DescribeConfigsResponse](t, b, describeReq(0, false, false,
		resource(kmsg.ConfigResourceTypeTopic, "c", "segment.bytes", "cleanup.policy"),
		resource(kmsg.ConfigResourceTypeTopic, "nope")), "PLAINTEXT")
	cs := r0.Resources[0].Configs
	if r0.Resources[0].ErrorCode != 0 || len(cs) != 2 || cs[0].Name != "cleanup.policy" || !cs[0].IsDefault ||
		cs[1].Name != "segment.bytes" || *cs[1].Value != "1048576" || cs[1].IsDefault {
		t.Fatalf("v0 %+v", r0.Resources[0])
	}
	if r0.Resources[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("v0 unknown %+v", r0.Resources[1])
	}

	r4 := call[*kmsg.DescribeConfigsResponse](t, b, describeReq(4, true, true,
		resource(kmsg.ConfigResourceTypeTopic, "c"),
		resource(kmsg.ConfigResourceTypeBroker, "1"),
		resource(kmsg.ConfigResourceTypeBroker, "2"),
		resource(kmsg.ConfigResourceTypeBroker, "")), "PLAINTEXT")
	byName := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range r4.Resources[0].Configs {
		byName[c.Name] = c
	}
	if len(byName) < 20 {
		t.Fatalf("only %d topic configs", len(byName))
	}
	rm := byName["retention.ms"]
	if *rm.Value != "86400000" || rm.Source != kmsg.ConfigSourceStaticBrokerConfig || rm.ConfigType != kmsg.ConfigTypeLong ||
		rm.Documentation == nil || len(rm.ConfigSynonyms) != 2 || rm.ConfigSynonyms[0].Name != "log.retention.hours" {
		t.Fatalf("retention.ms %+v", rm)
	}
	if sb := byName["segment.bytes"]; sb.Source != kmsg.ConfigSourceDynamicTopicConfig || sb.ConfigSynonyms[0].Name != "segment.bytes" {
		t.Fatalf("segment.bytes %+v", sb)
	}
	// Broker 1: every known key, set ones STATIC_BROKER_CONFIG with the
	// file's value, the rest DEFAULT_CONFIG with the default.
	broker := r4.Resources[1]
	bc := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range broker.Configs {
		bc[c.Name] = c
		if c.ReadOnly == config.IsDynamicBrokerConfig(c.Name) {
			t.Errorf("broker config %s: read_only %v, want it for the keys that are not dynamic only", c.Name, c.ReadOnly)
		}
	}
	if broker.ErrorCode != 0 || len(bc) != len(broker.Configs) {
		t.Fatalf("broker %+v", broker)
	}
	for k := range b.Config.Raw {
		if _, ok := bc[k]; !ok {
			t.Errorf("server.properties key %s missing", k)
		}
	}
	val := func(c kmsg.DescribeConfigsResponseResourceConfig) string {
		if c.Value == nil {
			return "<null>"
		}
		return *c.Value
	}
	type syn struct {
		name, value string
		src         kmsg.ConfigSource
	}
	const static, def = kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigSourceDefaultConfig
	for _, w := range []struct {
		name, value string
		src         kmsg.ConfigSource
		typ         kmsg.ConfigType
		syns        []syn
	}{
		{"num.partitions", "2", static, kmsg.ConfigTypeInt, []syn{{"num.partitions", "2", static}, {"num.partitions", "1", def}}},
		{"log.segment.bytes", "1073741824", def, kmsg.ConfigTypeInt, []syn{{"log.segment.bytes", "1073741824", def}}},
		{"message.max.bytes", "1048588", def, kmsg.ConfigTypeInt, []syn{{"message.max.bytes", "1048588", def}}},
		{"default.replication.factor", "1", def, kmsg.ConfigTypeShort, []syn{{"default.replication.factor", "1", def}}},
		{"auto.create.topics.enable", "true", def, kmsg.ConfigTypeBoolean, []syn{{"auto.create.topics.enable", "true", def}}},
		{"log.retention.hours", "24", static, kmsg.ConfigTypeInt, []syn{{"log.retention.hours", "24", static}, {"log.retention.hours", "168", def}}},
		// Kafka's default is null; the set synonym (hours) ranks below it.
		{"log.retention.ms", "<null>", def, kmsg.ConfigTypeLong, nil},
		{"log.roll.hours", "168", def, kmsg.ConfigTypeInt, []syn{{"log.roll.hours", "168", def}}},
		{"broker.id", "1", static, kmsg.ConfigTypeInt, []syn{{"broker.id", "1", static}, {"broker.id", "0", def}}},
		{"ssl.keystore.password", "<null>", static, kmsg.ConfigTypePassword, // Kafka's type, now that ssl.* is applied
			[]syn{{"ssl.keystore.password", "<null>", static}}},
	} {
		c, ok := bc[w.name]
		if !ok {
			t.Errorf("%s missing", w.name)
			continue
		}
		var got []syn
		for _, s := range c.ConfigSynonyms {
			v := "<null>"
			if s.Value != nil {
				v = *s.Value
			}
			got = append(got, syn{s.Name, v, s.Source})
		}
		if val(c) != w.value || c.Source != w.src || c.ConfigType != w.typ || !reflect.DeepEqual(got, w.syns) {
			t.Errorf("%s = %s %v type %v synonyms %v; want %s %v type %v synonyms %v", w.name, val(c), c.Source, c.ConfigType, got, w.value, w.src, w.typ, w.syns)
		}
	}
	if c := bc["ssl.keystore.password"]; !c.IsSensitive {
		t.Errorf("password not sensitive %+v", c)
	}
	// "" is the cluster-wide dynamic default: there is none. Another id: INVALID_REQUEST.
	if r4.Resources[2].ErrorCode != kerr.InvalidRequest.Code || r4.Resources[3].ErrorCode != 0 || len(r4.Resources[3].Configs) != 0 {
		t.Fatalf("broker ids %+v / %+v", r4.Resources[2], r4.Resources[3])
	}

	// ConfigNames filters; v0 marks defaults with IsDefault and has no synonyms.
	r0 = call[*kmsg.DescribeConfigsResponse](t, b, describeReq(0, false, false,
		resource(kmsg.ConfigResourceTypeBroker, "1", "num.partitions", "log.segment.bytes", "no.such.key")), "PLAINTEXT")
	cs = r0.Resources[0].Configs
	if r0.Resources[0].ErrorCode != 0 || len(cs) != 2 || cs[0].Name != "log.segment.bytes" || !cs[0].IsDefault || val(cs[0]) != "1073741824" ||
		cs[1].Name != "num.partitions" || cs[1].IsDefault || val(cs[1]) != "2" || len(cs[0].ConfigSynonyms)+len(cs[1].ConfigSynonyms) != 0 {
		t.Fatalf("v0 broker filter %+v", r0.Resources[0])
	}
}

func TestDescribeClusterVersions(t *testing.T) {
	b, _ := adminBroker(t, nil)
	for _, v := range []int16{0, 1} {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version = v
		req.EndpointType = 1
		r := call[*kmsg.DescribeClusterResponse](t, b, req, "INTERNAL")
		if r.ErrorCode != 0 || len(r.ClusterID) != 22 || r.ControllerID != 1 || len(r.Brokers) != 1 ||
			r.Brokers[0].Host != "10.0.0.1" || r.Brokers[0].Port != 9093 || r.ClusterAuthorizedOperations != -2147483648 {
			t.Fatalf("v%d %+v", v, r)
		}
	}
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version = 1
	req.EndpointType = 2
	if r := call[*kmsg.DescribeClusterResponse](t, b, req, "PLAINTEXT"); r.ErrorCode != kerr.UnsupportedEndpointType.Code {
		t.Fatalf("controller endpoints: %+v", r)
	}
}

func incAlter(v int16, topic string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version = v
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.Configs = kmsg.ConfigResourceTypeTopic, topic, ops
	req.Resources = append(req.Resources, r)
	return req
}

func op(name string, o kmsg.IncrementalAlterConfigOp, v *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = name, o, v
	return c
}

func TestIncrementalAlterConfigs(t *testing.T) {
	b, rm := adminBroker(t, nil)
	call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(4, false, newTopic("i", 1, 1, map[string]string{"flush.ms": "10"})), "PLAINTEXT")
	for _, v := range []int16{0, 1} {
		r := call[*kmsg.IncrementalAlterConfigsResponse](t, b, incAlter(v, "i",
			op("retention.ms", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("5000")),
			op("cleanup.policy", kmsg.IncrementalAlterConfigOpAppend, kmsg.StringPtr("compact")),
			op("flush.ms", kmsg.IncrementalAlterConfigOpDelete, nil)), "PLAINTEXT")
		if r.Resources[0].ErrorCode != 0 {
			t.Fatalf("v%d %+v", v, r.Resources[0])
		}
	}
	cfg, _ := b.Topics.TopicConfig("i")
	if !reflect.DeepEqual(cfg, map[string]string{"retention.ms": "5000", "cleanup.policy": "delete,compact"}) {
		t.Fatalf("config %v", cfg)
	}
	rm.mu.Lock() // the controller's config-change watch may apply it again meanwhile
	lc := rm.configs["i"]
	rm.mu.Unlock()
	if lc.RetentionMs != 5000 || !lc.Compact {
		t.Fatalf("UpdateConfig %+v", lc)
	}
	for _, c := range []struct {
		req  *kmsg.IncrementalAlterConfigsRequest
		want *kerr.Error
	}{
		{incAlter(1, "i", op("retention.ms", kmsg.IncrementalAlterConfigOpAppend, kmsg.StringPtr("1"))), kerr.InvalidConfig},
		{incAlter(1, "i", op("retention.ms", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("soon"))), kerr.InvalidConfig},
		{incAlter(1, "i", op("a", 0, kmsg.StringPtr("1")), op("a", 0, kmsg.StringPtr("2"))), kerr.InvalidRequest},
		{incAlter(1, "missing", op("retention.ms", 0, kmsg.StringPtr("1"))), kerr.UnknownTopicOrPartition},
	} {
		r := call[*kmsg.IncrementalAlterConfigsResponse](t, b, c.req, "PLAINTEXT")
		if r.Resources[0].ErrorCode != c.want.Code {
			t.Errorf("%+v: got %d want %v", c.req.Resources[0].Configs, r.Resources[0].ErrorCode, c.want)
		}
	}
	// Subtract back, validate_only leaves it alone.
	req := incAlter(1, "i", op("cleanup.policy", kmsg.IncrementalAlterConfigOpSubtract, kmsg.StringPtr("delete")))
	req.ValidateOnly = true
	call[*kmsg.IncrementalAlterConfigsResponse](t, b, req, "PLAINTEXT")
	if cfg, _ := b.Topics.TopicConfig("i"); cfg["cleanup.policy"] != "delete,compact" {
		t.Fatalf("validate_only changed config: %v", cfg)
	}
	req.ValidateOnly = false
	call[*kmsg.IncrementalAlterConfigsResponse](t, b, req, "PLAINTEXT")
	if cfg, _ := b.Topics.TopicConfig("i"); cfg["cleanup.policy"] != "compact" {
		t.Fatalf("subtract: %v", cfg)
	}
}

func TestAlterConfigsReplaces(t *testing.T) {
	b, _ := adminBroker(t, nil)
	call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(4, false, newTopic("ac", 1, 1, map[string]string{"flush.ms": "10"})), "PLAINTEXT")
	for _, v := range []int16{0, 2} {
		req := kmsg.NewPtrAlterConfigsRequest()
		req.Version = v
		r := kmsg.NewAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "ac"
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "retention.ms", kmsg.StringPtr("77")
		r.Configs = append(r.Configs, c)
		br := kmsg.NewAlterConfigsRequestResource()
		br.ResourceType, br.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		req.Resources = append(req.Resources, r, br)
		resp := call[*kmsg.AlterConfigsResponse](t, b, req, "PLAINTEXT")
		if resp.Resources[0].ErrorCode != 0 || resp.Resources[1].ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("v%d %+v", v, resp.Resources)
		}
	}
	if cfg, _ := b.Topics.TopicConfig("ac"); !reflect.DeepEqual(cfg, map[string]string{"retention.ms": "77"}) {
		t.Fatalf("config %v", cfg)
	}
}
