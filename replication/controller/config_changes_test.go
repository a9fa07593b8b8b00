package controller

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/config"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/storage"
)

// minRM is a fakeRM that also applies min.insync.replicas (MinInsyncUpdater).
type minRM struct {
	fakeRM
	minMu sync.Mutex
	min   map[string]int
}

func (m *minRM) UpdateMinInsyncReplicas(topic string, n int) {
	m.minMu.Lock()
	defer m.minMu.Unlock()
	if m.min == nil {
		m.min = map[string]int{}
	}
	m.min[topic] = n
}

func (m *minRM) minOf(topic string) int {
	m.minMu.Lock()
	defer m.minMu.Unlock()
	return m.min[topic]
}

func (f *fakeRM) configOf(topic string) (storage.LogConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.configs[topic]
	return c, ok
}

// startWith is start with a given replica manager.
func startWith(t *testing.T, dir string, cfg *config.Broker, rm ReplicaManager) *env {
	t.Helper()
	s, err := metastore.OpenEmbeddedDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := New(s, rm, cfg, Options{})
	if err := c.Start(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	e := &env{dir: dir, store: s, c: c}
	t.Cleanup(e.stop)
	return e
}

// standby starts a second broker (id 1) on e's store: not the controller.
func standby(t *testing.T, e *env, rm ReplicaManager, now func() time.Time) *Controller {
	t.Helper()
	cfg, err := config.Parse(map[string]string{"broker.id": "1", "advertised.listeners": "PLAINTEXT://127.0.0.1:9093"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := New(e.store, rm, cfg, Options{Now: now})
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if c.Epoch() != 0 {
		t.Fatalf("second broker won the controller (epoch %d)", c.Epoch())
	}
	return c
}

// TestTopicConfigOnStandbyBroker: a broker that is not the controller
// describes a topic's config from ZooKeeper and alters it (Kafka's
// ZooKeeper mode serves both on any broker); the controller learns of the
// change from the /config/changes notification: its replica manager
// gets the new log config and min.insync.replicas, and its own state
// carries the config into the next LeaderAndIsr.
func TestTopicConfigOnStandbyBroker(t *testing.T) {
	ctrlRM := &minRM{}
	e := startWith(t, t.TempDir(), testConfig(), ctrlRM)
	res := e.c.CreateTopics([]NewTopic{{Name: "c", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]string{"segment.bytes": "1048576"}}}, false)
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	sbRM := &minRM{}
	sb := standby(t, e, sbRM, nil)

	cfg, err := sb.TopicConfig("c")
	if err != nil || cfg["segment.bytes"] != "1048576" || len(cfg) != 1 {
		t.Fatalf("standby TopicConfig = %v, %v; want segment.bytes=1048576", cfg, err)
	}
	if _, err := sb.TopicConfig("nope"); code(err) != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("standby TopicConfig(nope): %v", err)
	}

	err = sb.AlterTopicConfig("c", func(m map[string]string) error {
		m["retention.ms"] = "42"
		m["min.insync.replicas"] = "3"
		return nil
	}, false)
	if err != nil {
		t.Fatalf("alter on the standby broker: %v", err)
	}
	if lc, _ := sbRM.configOf("c"); lc.RetentionMs != 42 || sbRM.minOf("c") != 3 {
		t.Fatalf("standby applied retention %d min.insync %d at once, want 42 and 3", lc.RetentionMs, sbRM.minOf("c"))
	}
	waitUntil(t, "the controller to apply the notification", func() bool {
		lc, _ := ctrlRM.configOf("c")
		return lc.RetentionMs == 42 && lc.SegmentBytes == 1048576 && ctrlRM.minOf("c") == 3
	})
	if cfg, _ := e.c.TopicConfig("c"); cfg["retention.ms"] != "42" || cfg["min.insync.replicas"] != "3" || cfg["segment.bytes"] != "1048576" {
		t.Fatalf("controller reads %v", cfg)
	}
	// The controller's state holds the new config: a new partition's
	// LeaderAndIsr carries it.
	if errs := e.c.CreatePartitions([]PartitionIncrease{{Topic: "c", Count: 2, Assignment: [][]int32{{0}}}}, false); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if l, ok := ctrlRM.last("c", 1); !ok || l.Config.RetentionMs != 42 || l.MinInsyncReplicas != 3 {
		t.Fatalf("LeaderAndIsr of the new partition (%v): config %+v min.insync %d", ok, l.Config, l.MinInsyncReplicas)
	}

	// Validation and errors are the same on the standby.
	if err := sb.AlterTopicConfig("c", func(m map[string]string) error { m["retention.ms"] = "x"; return nil }, false); code(err) != kerr.InvalidConfig.Code {
		t.Fatalf("bad value: %v", err)
	}
	if err := sb.AlterTopicConfig("nope", func(map[string]string) error { return nil }, false); code(err) != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %v", err)
	}
	if err := sb.AlterTopicConfig("c", func(m map[string]string) error { m["retention.ms"] = "7"; return nil }, true); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := sb.TopicConfig("c"); cfg["retention.ms"] != "42" {
		t.Fatalf("validate-only or failed alters changed the config: %v", cfg)
	}
}

// TestConfigChangeNotificationFromTool: a change written straight to
// ZooKeeper (as `configs --zookeeper` does) reaches a standby broker
// through its watch; a deleted override falls back to the broker default.
func TestConfigChangeNotificationFromTool(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	e.c.CreateTopics([]NewTopic{{Name: "n", NumPartitions: 1, ReplicationFactor: 1}}, false)
	sbRM := &minRM{}
	standby(t, e, sbRM, nil)
	if _, err := ChangeTopicConfig(e.store, "n", func(m map[string]string) error { m["retention.ms"] = "99"; return nil }, false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the standby to apply retention.ms=99", func() bool { lc, _ := sbRM.configOf("n"); return lc.RetentionMs == 99 })
	if _, err := ChangeTopicConfig(e.store, "n", func(m map[string]string) error { delete(m, "retention.ms"); return nil }, false); err != nil {
		t.Fatal(err)
	}
	def := testConfig().LogConfig().RetentionMs
	waitUntil(t, "the standby to fall back to the broker default", func() bool { lc, _ := sbRM.configOf("n"); return lc.RetentionMs == def })
	data, _, err := e.store.Get(zkmeta.TopicConfigPath("n"))
	if err != nil || string(data) != `{"version":1,"config":{}}` {
		t.Fatalf("/config/topics/n = %s (%v)", data, err)
	}
}

// TestConfigChangesPurgedAfterExpiry: a notification first seen more than
// ConfigChangeExpiry ago is deleted when the listener next runs.
func TestConfigChangesPurgedAfterExpiry(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	e.c.CreateTopics([]NewTopic{{Name: "x", NumPartitions: 1, ReplicationFactor: 1}}, false)
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	sbRM := &minRM{}
	standby(t, e, sbRM, now)
	set := func(v string) {
		t.Helper()
		if _, err := ChangeTopicConfig(e.store, "x", func(m map[string]string) error { m["retention.ms"] = v; return nil }, false); err != nil {
			t.Fatal(err)
		}
	}
	set("1")
	waitUntil(t, "retention.ms=1 applied", func() bool { lc, _ := sbRM.configOf("x"); return lc.RetentionMs == 1 })
	kids, _ := e.store.Children(zkmeta.ConfigChangesPath)
	if len(kids) != 1 {
		t.Fatalf("notifications %v, want 1", kids)
	}
	first := kids[0]
	offset.Store(int64(ConfigChangeExpiry + time.Minute))
	set("2")
	waitUntil(t, "the expired notification purged", func() bool {
		kids, _ := e.store.Children(zkmeta.ConfigChangesPath)
		lc, _ := sbRM.configOf("x")
		return len(kids) == 1 && kids[0] != first && lc.RetentionMs == 2
	})
}

// TestUncleanEnabledByConfigChange: a partition left without a leader
// (its only ISR member is gone, unclean election off) gets the live
// out-of-sync replica as leader as soon as the topic's
// unclean.leader.election.enable is set, without any broker change.
func TestUncleanEnabledByConfigChange(t *testing.T) {
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
	e2 := start(t, dir, cfg)
	p0 := e2.c.Snapshot().Topics["m"].Partitions[0]
	if p0.Leader != -1 {
		t.Fatalf("without unclean election the partition has leader %d, want -1", p0.Leader)
	}
	if err := e2.c.AlterTopicConfig("m", func(m map[string]string) error { m["unclean.leader.election.enable"] = "true"; return nil }, false); err != nil {
		t.Fatal(err)
	}
	l, ok := e2.rm.last("m", 0)
	if !ok || l.Leader != 5 || l.LeaderEpoch != p0.LeaderEpoch+1 || len(l.ISR) != 1 || l.ISR[0] != 5 {
		t.Fatalf("LeaderAndIsr after enabling unclean election (%v): leader %d epoch %d isr %v", ok, l.Leader, l.LeaderEpoch, l.ISR)
	}
	data, _, _ := e2.store.Get(zkmeta.PartitionStatePath("m", 0))
	if s, _ := zkmeta.DecodePartitionState(data); s.Leader != 5 || s.LeaderEpoch != p0.LeaderEpoch+1 {
		t.Fatalf("state %s", data)
	}
	if p := e2.c.Snapshot().Topics["m"].Partitions[0]; p.Leader != 5 {
		t.Fatalf("metadata leader %d, want 5", p.Leader)
	}
}
