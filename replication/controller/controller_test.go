package controller

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/config"
	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/storage"
)

// fakeRM records what the controller asks of the replica manager.
type fakeRM struct {
	mu      sync.Mutex
	applied []partition.LeaderAndIsr
	stopped []partition.TopicPartition
	deleted bool
	configs map[string]storage.LogConfig
	fail    map[partition.TopicPartition]error
	stopErr error
	// stopGate, when set before the controller starts, holds every
	// StopReplicas until it is closed; stopEntered receives once per call.
	stopGate    chan struct{}
	stopEntered chan struct{}
}

func (f *fakeRM) ApplyLeaderAndIsr(states []partition.LeaderAndIsr) map[partition.TopicPartition]error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied = append(f.applied, states...)
	return f.fail
}

func (f *fakeRM) StopReplicas(tps []partition.TopicPartition, deleteLogs bool) error {
	if f.stopGate != nil {
		select {
		case f.stopEntered <- struct{}{}:
		default:
		}
		<-f.stopGate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopErr != nil {
		return f.stopErr
	}
	f.stopped = append(f.stopped, tps...)
	f.deleted = deleteLogs
	return nil
}

func (f *fakeRM) UpdateConfig(topic string, cfg storage.LogConfig) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.configs == nil {
		f.configs = map[string]storage.LogConfig{}
	}
	f.configs[topic] = cfg
}

func (f *fakeRM) last(topic string, p int32) (partition.LeaderAndIsr, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.applied) - 1; i >= 0; i-- {
		if f.applied[i].Topic == topic && f.applied[i].Partition == p {
			return f.applied[i], true
		}
	}
	return partition.LeaderAndIsr{}, false
}

func testConfig() *config.Broker {
	cfg, err := config.Parse(map[string]string{"broker.id": "0", "advertised.listeners": "PLAINTEXT://127.0.0.1:9092"}, nil)
	if err != nil {
		panic(err)
	}
	return cfg
}

type env struct {
	dir   string
	store *metastore.Embedded
	rm    *fakeRM
	c     *Controller
}

func start(t *testing.T, dir string, cfg *config.Broker) *env {
	t.Helper()
	s, err := metastore.OpenEmbeddedDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rm := &fakeRM{}
	c := New(s, rm, cfg, Options{})
	if err := c.Start(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	e := &env{dir: dir, store: s, rm: rm, c: c}
	t.Cleanup(e.stop)
	return e
}

func (e *env) stop() {
	e.c.Close()
	e.store.Close()
}

func code(err error) int16 { c, _ := Code(err); return c }

func TestStartRegistersAndElects(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	for _, p := range zkmeta.PersistentPaths {
		if ok, _ := e.store.Exists(p); !ok {
			t.Errorf("%s missing", p)
		}
	}
	data, _, err := e.store.Get(zkmeta.BrokerPath(0))
	if err != nil {
		t.Fatal(err)
	}
	bi, err := zkmeta.DecodeBrokerInfo(0, data)
	if err != nil || len(bi.Endpoints) != 1 || bi.Endpoints[0].ConnectionString() != "PLAINTEXT://127.0.0.1:9092" {
		t.Fatalf("broker znode %s (%v)", data, err)
	}
	data, _, _ = e.store.Get(zkmeta.ControllerPath)
	if id, _ := zkmeta.DecodeController(data); id != 0 {
		t.Fatalf("controller %s", data)
	}
	if e.c.Epoch() != 1 {
		t.Fatalf("epoch %d", e.c.Epoch())
	}
	snap := e.c.Snapshot()
	if snap.ControllerID != 0 || len(snap.ClusterID) != 22 || len(snap.Brokers) != 1 || snap.Brokers[0].Port != 9092 {
		t.Fatalf("snapshot %+v", snap)
	}
}

func TestSecondBrokerSameIDFails(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	c2 := New(e.store, &fakeRM{}, testConfig(), Options{})
	if err := c2.Start(); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("second start: %v", err)
	}
}

func TestCreateTopics(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	long := strings.Repeat("x", 250)
	res := e.c.CreateTopics([]NewTopic{
		{Name: "orders", NumPartitions: 3, ReplicationFactor: 1, Configs: map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}},
		{Name: "dflt", NumPartitions: -1, ReplicationFactor: -1},
		{Name: "bad name", NumPartitions: 1, ReplicationFactor: 1},
		{Name: "..", NumPartitions: 1, ReplicationFactor: 1},
		{Name: long, NumPartitions: 1, ReplicationFactor: 1},
		{Name: "orders", NumPartitions: 1, ReplicationFactor: 1},
		{Name: "zero", NumPartitions: 0, ReplicationFactor: 1},
		{Name: "rf3", NumPartitions: 1, ReplicationFactor: 3},
		{Name: "rf0", NumPartitions: 1, ReplicationFactor: 0},
		{Name: "cfg", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]string{"retention.ms": "abc"}},
		{Name: "unknowncfg", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]string{"nope": "1"}},
		{Name: "manual", NumPartitions: -1, ReplicationFactor: -1, Assignment: map[int32][]int32{0: {0}, 1: {0}}},
		{Name: "manualbad", NumPartitions: -1, ReplicationFactor: -1, Assignment: map[int32][]int32{0: {1}}},
		{Name: "manualgap", NumPartitions: -1, ReplicationFactor: -1, Assignment: map[int32][]int32{0: {0}, 2: {0}}},
		{Name: "manualdup", NumPartitions: -1, ReplicationFactor: -1, Assignment: map[int32][]int32{0: {0, 0}}},
		{Name: "both", NumPartitions: 1, ReplicationFactor: -1, Assignment: map[int32][]int32{0: {0}}},
	}, false)
	want := []*kerr.Error{nil, nil, kerr.InvalidTopicException, kerr.InvalidTopicException, kerr.InvalidTopicException,
		kerr.TopicAlreadyExists, kerr.InvalidPartitions, kerr.InvalidReplicationFactor, kerr.InvalidReplicationFactor,
		kerr.InvalidConfig, kerr.InvalidConfig, nil, kerr.InvalidReplicaAssignment, kerr.InvalidReplicaAssignment,
		kerr.InvalidReplicaAssignment, kerr.InvalidRequest}
	for i, r := range res {
		var wc int16
		if want[i] != nil {
			wc = want[i].Code
		}
		if code(r.Err) != wc {
			t.Errorf("%s: got %v, want %v", r.Name, r.Err, want[i])
		}
	}
	if _, msg := Code(res[7].Err); msg == nil || *msg != "Replication factor: 3 larger than available brokers: 1." {
		t.Errorf("rf3 message %v", msg)
	}
	if res[0].NumPartitions != 3 || res[0].ReplicationFactor != 1 || res[0].TopicID == ([16]byte{}) {
		t.Errorf("orders result %+v", res[0])
	}
	if res[1].NumPartitions != 1 || res[11].NumPartitions != 2 {
		t.Errorf("defaults/manual partitions %d %d", res[1].NumPartitions, res[11].NumPartitions)
	}

	// Znodes as Kafka writes them.
	data, _, err := e.store.Get(zkmeta.TopicPath("orders"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := zkmeta.DecodeTopicAssignment("orders", data)
	if !reflect.DeepEqual(a.Partitions, map[int32][]int32{0: {0}, 1: {0}, 2: {0}}) || a.TopicID != res[0].TopicID {
		t.Fatalf("assignment %s", data)
	}
	data, _, _ = e.store.Get(zkmeta.PartitionStatePath("orders", 2))
	if string(data) != `{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}` {
		t.Fatalf("state %s", data)
	}
	data, _, _ = e.store.Get(zkmeta.TopicConfigPath("orders"))
	if string(data) != `{"version":1,"config":{"cleanup.policy":"compact","retention.ms":"1000"}}` {
		t.Fatalf("config %s", data)
	}
	// LeaderAndIsr went to the replica manager with the topic's log config.
	l, ok := e.rm.last("orders", 1)
	if !ok || l.Leader != 0 || l.LeaderEpoch != 0 || !reflect.DeepEqual(l.ISR, []int32{0}) ||
		l.Config.RetentionMs != 1000 || !l.Config.Compact || l.TopicID != res[0].TopicID || l.ControllerEpoch != 1 {
		t.Fatalf("LeaderAndIsr %+v", l)
	}
	snap := e.c.Snapshot()
	if tp := snap.Topics["orders"]; tp == nil || len(tp.Partitions) != 3 || tp.Partitions[2].Leader != 0 || snap.TopicsByID[res[0].TopicID] != tp {
		t.Fatalf("snapshot topic %+v", snap.Topics["orders"])
	}
	// '.' and '_' collide.
	r := e.c.CreateTopics([]NewTopic{{Name: "my.topic", NumPartitions: 1, ReplicationFactor: 1}, {Name: "my_topic", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if r[0].Err != nil || code(r[1].Err) != kerr.InvalidTopicException.Code {
		t.Fatalf("collision: %v %v", r[0].Err, r[1].Err)
	}
	if _, msg := Code(r[1].Err); *msg != "Topic 'my_topic' collides with existing topic: my.topic" {
		t.Fatalf("collision message %q", *msg)
	}
}

func TestCreateTopicsValidateOnly(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	res := e.c.CreateTopics([]NewTopic{{Name: "v", NumPartitions: 4, ReplicationFactor: 1}}, true)
	if res[0].Err != nil || res[0].NumPartitions != 4 {
		t.Fatalf("%+v", res[0])
	}
	if ok, _ := e.store.Exists(zkmeta.TopicPath("v")); ok {
		t.Fatal("validate_only wrote the topic")
	}
	if len(e.rm.applied) != 0 || e.c.Snapshot().Topics["v"] != nil {
		t.Fatal("validate_only started partitions")
	}
}

func TestDeleteTopics(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	e.c.CreateTopics([]NewTopic{{Name: "d", NumPartitions: 2, ReplicationFactor: 1, Configs: map[string]string{"retention.ms": "5"}}}, false)
	errs := e.c.DeleteTopics([]string{"d", "missing"})
	if errs[0] != nil || code(errs[1]) != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("delete: %v", errs)
	}
	if !e.rm.deleted || !reflect.DeepEqual(e.rm.stopped, []partition.TopicPartition{{Topic: "d", Partition: 0}, {Topic: "d", Partition: 1}}) {
		t.Fatalf("StopReplicas %v delete=%v", e.rm.stopped, e.rm.deleted)
	}
	for _, p := range []string{zkmeta.TopicPath("d"), zkmeta.TopicConfigPath("d"), zkmeta.DeleteTopicPath("d")} {
		if ok, _ := e.store.Exists(p); ok {
			t.Errorf("%s survived", p)
		}
	}
	if e.c.Snapshot().Topics["d"] != nil {
		t.Fatal("deleted topic still in metadata")
	}
	// Re-create with the same name works and gets a fresh config.
	r := e.c.CreateTopics([]NewTopic{{Name: "d", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	if cfg, _ := e.c.TopicConfig("d"); len(cfg) != 0 {
		t.Fatalf("stale config %v", cfg)
	}
}

func TestDeleteDisabled(t *testing.T) {
	cfg := testConfig()
	cfg.DeleteTopicEnable = false
	e := start(t, t.TempDir(), cfg)
	e.c.CreateTopics([]NewTopic{{Name: "keep", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if errs := e.c.DeleteTopics([]string{"keep"}); code(errs[0]) != kerr.TopicDeletionDisabled.Code {
		t.Fatalf("%v", errs)
	}
}

func TestInterruptedDeleteCompletesOnRestart(t *testing.T) {
	dir := t.TempDir()
	e := start(t, dir, testConfig())
	e.c.CreateTopics([]NewTopic{{Name: "gone", NumPartitions: 1, ReplicationFactor: 1}}, false)
	e.rm.stopErr = errors.New("disk busy")
	if errs := e.c.DeleteTopics([]string{"gone"}); errs[0] == nil {
		t.Fatal("delete with failing StopReplicas succeeded")
	}
	if ok, _ := e.store.Exists(zkmeta.DeleteTopicPath("gone")); !ok {
		t.Fatal("deletion marker missing after failure")
	}
	e.stop()
	e2 := start(t, dir, testConfig())
	if ok, _ := e2.store.Exists(zkmeta.TopicPath("gone")); ok {
		t.Fatal("topic not deleted on restart")
	}
	if len(e2.rm.stopped) != 1 || !e2.rm.deleted {
		t.Fatalf("restart StopReplicas %v", e2.rm.stopped)
	}
}

func TestCreatePartitions(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	e.c.CreateTopics([]NewTopic{{Name: "p", NumPartitions: 2, ReplicationFactor: 1}}, false)
	errs := e.c.CreatePartitions([]PartitionIncrease{
		{Topic: "p", Count: 4},
		{Topic: "missing", Count: 2},
	}, false)
	if errs[0] != nil || code(errs[1]) != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("%v", errs)
	}
	errs = e.c.CreatePartitions([]PartitionIncrease{
		{Topic: "p", Count: 4},
		{Topic: "p", Count: 3},
		{Topic: "p", Count: 6, Assignment: [][]int32{{0}}},
		{Topic: "p", Count: 5, Assignment: [][]int32{{7}}},
	}, false)
	for i, want := range []*kerr.Error{kerr.InvalidPartitions, kerr.InvalidPartitions, kerr.InvalidReplicaAssignment, kerr.InvalidReplicaAssignment} {
		if code(errs[i]) != want.Code {
			t.Errorf("%d: %v want %v", i, errs[i], want)
		}
	}
	if _, msg := Code(errs[1]); *msg != "Topic currently has 4 partitions, which is higher than the requested 3." {
		t.Errorf("message %q", *msg)
	}
	if l, ok := e.rm.last("p", 3); !ok || l.Leader != 0 {
		t.Fatal("new partition not started")
	}
	if tp := e.c.Snapshot().Topics["p"]; len(tp.Partitions) != 4 {
		t.Fatalf("snapshot partitions %d", len(tp.Partitions))
	}
	if errs := e.c.CreatePartitions([]PartitionIncrease{{Topic: "p", Count: 5, Assignment: [][]int32{{0}}}}, true); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if len(e.c.Snapshot().Topics["p"].Partitions) != 4 {
		t.Fatal("validate_only added partitions")
	}
}

func TestAlterTopicConfig(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	e.c.CreateTopics([]NewTopic{{Name: "c", NumPartitions: 1, ReplicationFactor: 1}}, false)
	err := e.c.AlterTopicConfig("c", func(m map[string]string) error { m["retention.ms"] = "42"; return nil }, false)
	if err != nil {
		t.Fatal(err)
	}
	if lc, _ := e.rm.configOf("c"); lc.RetentionMs != 42 {
		t.Fatalf("UpdateConfig %+v", lc)
	}
	if kids, _ := e.store.Children(zkmeta.ConfigChangesPath); len(kids) != 1 || kids[0] != "config_change_0000000000" {
		t.Fatalf("change notification %v", kids)
	}
	err = e.c.AlterTopicConfig("c", func(m map[string]string) error { m["retention.ms"] = "x"; return nil }, false)
	if code(err) != kerr.InvalidConfig.Code {
		t.Fatalf("bad value: %v", err)
	}
	if cfg, _ := e.c.TopicConfig("c"); cfg["retention.ms"] != "42" {
		t.Fatalf("failed alter changed config: %v", cfg)
	}
	if err := e.c.AlterTopicConfig("nope", func(map[string]string) error { return nil }, false); code(err) != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %v", err)
	}
}

func TestAutoCreate(t *testing.T) {
	cfg := testConfig()
	cfg.NumPartitions = 3
	cfg.DefaultReplicationFactor = 3 // capped to the one live broker
	e := start(t, t.TempDir(), cfg)
	errs := e.c.AutoCreateTopics([]string{"auto", "bad/name"})
	if errs["auto"] != nil || code(errs["bad/name"]) != kerr.InvalidTopicException.Code {
		t.Fatalf("%v", errs)
	}
	if tp := e.c.Snapshot().Topics["auto"]; tp == nil || len(tp.Partitions) != 3 {
		t.Fatal("auto topic missing")
	}
}

func TestRestartReloadsWithSameEpochs(t *testing.T) {
	dir := t.TempDir()
	e := start(t, dir, testConfig())
	e.c.CreateTopics([]NewTopic{{Name: "r", NumPartitions: 2, ReplicationFactor: 1, Configs: map[string]string{"segment.bytes": "1048576"}}}, false)
	id := e.c.Snapshot().Topics["r"].ID
	cluster := e.c.ClusterID()
	e.stop()

	e2 := start(t, dir, testConfig())
	if e2.c.ClusterID() != cluster {
		t.Fatalf("cluster id changed %q → %q", cluster, e2.c.ClusterID())
	}
	if e2.c.Epoch() != 2 {
		t.Fatalf("controller epoch %d, want 2", e2.c.Epoch())
	}
	for p := int32(0); p < 2; p++ {
		l, ok := e2.rm.last("r", p)
		if !ok || l.Leader != 0 || l.LeaderEpoch != 0 || l.TopicID != id || l.Config.SegmentBytes != 1048576 {
			t.Fatalf("restart LeaderAndIsr %+v", l)
		}
	}
	if snap := e2.c.Snapshot(); snap.Topics["r"] == nil || snap.Topics["r"].ID != id {
		t.Fatal("topic not reloaded")
	}
}

func TestRestartWithChangedBrokerIDBumpsEpoch(t *testing.T) {
	// The log dir moves to broker 5: the old leader 0 is gone, so the
	// partition has no eligible leader without unclean election, and gets
	// broker 5 with a bumped epoch only if 5 is assigned. Here we reassign by
	// hand to [5] and keep ISR [0]: unclean election picks 5, epoch 1.
	dir := t.TempDir()
	e := start(t, dir, testConfig())
	e.c.CreateTopics([]NewTopic{{Name: "m", NumPartitions: 1, ReplicationFactor: 1}}, false)
	a := zkmeta.TopicAssignment{TopicID: e.c.Snapshot().Topics["m"].ID, Partitions: map[int32][]int32{0: {5}}}
	if _, err := e.store.Set(zkmeta.TopicPath("m"), a.Encode(), -1); err != nil {
		t.Fatal(err)
	}
	e.stop()
	cfg := testConfig()
	cfg.BrokerID = 5
	cfg.UncleanLeaderElection = true
	e2 := start(t, dir, cfg)
	l, ok := e2.rm.last("m", 0)
	if !ok || l.Leader != 5 || l.LeaderEpoch != 1 || !reflect.DeepEqual(l.ISR, []int32{5}) {
		t.Fatalf("LeaderAndIsr %+v", l)
	}
	data, _, _ := e2.store.Get(zkmeta.PartitionStatePath("m", 0))
	if s, _ := zkmeta.DecodePartitionState(data); s.LeaderEpoch != 1 || s.ControllerEpoch != 2 {
		t.Fatalf("state %s", data)
	}
}

func TestLeaderAndIsrFailureMarksOffline(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	e.rm.fail = map[partition.TopicPartition]error{{Topic: "f", Partition: 0}: errors.New("log dir offline")}
	e.c.CreateTopics([]NewTopic{{Name: "f", NumPartitions: 1, ReplicationFactor: 1}}, false)
	p := e.c.Snapshot().Topics["f"].Partitions[0]
	if p.Leader != -1 || !reflect.DeepEqual(p.OfflineReplicas, []int32{0}) {
		t.Fatalf("partition %+v", p)
	}
}

// setStore swaps the controller's store (a test's fault-injecting
// wrapper) for the code off the actor and for its events alike.
func (c *Controller) setStore(s metastore.Store) {
	c.store, c.meta = s, eventStore{c: c, s: s}
}
