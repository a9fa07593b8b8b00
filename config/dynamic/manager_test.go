package dynamic

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

func static(t *testing.T, kv map[string]string) *config.Broker {
	t.Helper()
	kv["broker.id"] = "3"
	kv["log.dirs"] = t.TempDir()
	b, err := config.Parse(kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Precedence: per-broker dynamic > default dynamic > static > default.
func TestPrecedence(t *testing.T) {
	m := New(static(t, map[string]string{"log.retention.hours": "24", "log.segment.bytes": "4096"}), nil)
	if got := m.Current().LogRetentionMs; got != 24*3600*1000 {
		t.Fatalf("static retention %d", got)
	}
	if err := m.Update(map[string]string{"log.retention.ms": "60000", "log.segment.bytes": "8192"}, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if c := m.Current(); c.LogRetentionMs != 60000 || c.LogSegmentBytes != 8192 {
		t.Fatalf("default layer: retention %d segment %d", c.LogRetentionMs, c.LogSegmentBytes)
	}
	if err := m.Update(nil, map[string]string{"log.retention.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	if c := m.Current(); c.LogRetentionMs != 1000 || c.LogSegmentBytes != 8192 {
		t.Fatalf("per-broker layer: retention %d segment %d", c.LogRetentionMs, c.LogSegmentBytes)
	}
	// Removing both falls back to server.properties.
	if err := m.Update(map[string]string{}, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if c := m.Current(); c.LogRetentionMs != 24*3600*1000 || c.LogSegmentBytes != 4096 {
		t.Fatalf("back to static: retention %d segment %d", c.LogRetentionMs, c.LogSegmentBytes)
	}
	if m.Static().LogRetentionMs != 24*3600*1000 {
		t.Fatal("static config modified")
	}
}

func TestValidateDynamicRefusals(t *testing.T) {
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"broker.id": "4", "log.dirs": "/x"}, "Cannot update these configs dynamically: Set(broker.id, log.dirs)"},
		{map[string]string{"log.retention.hours": "1"}, "Cannot update these configs dynamically: Set(log.retention.hours)"},
		{map[string]string{"zookeeper.connect": "h:1"}, "Cannot update these configs dynamically: Set(zookeeper.connect)"},
		{map[string]string{"num.io.threads": "2"}, "Gregor does not apply these configs at run time"},
		{map[string]string{"num.replica.fetchers": "0"}, "num.replica.fetchers"},
		{map[string]string{"listener.name.plaintext.ssl.truststore.location": "/k"}, "Gregor does not apply these configs at run time"},
		{map[string]string{"no.such.config": "1"}, "Unknown broker configs: Set(no.such.config)"},
		{map[string]string{"log.retention.ms": "soon"}, "log.retention.ms"},
		{map[string]string{"max.connections.per.ip": "-1"}, "max.connections.per.ip"},
		{map[string]string{"leader.replication.throttled.rate": "-5"}, "leader.replication.throttled.rate"},
	} {
		err := config.ValidateDynamic(c.props, true)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.props, err, c.want)
		}
	}
	if err := config.ValidateDynamic(map[string]string{"leader.replication.throttled.rate": "1000", "max.connections": "10", "log.cleanup.policy": "compact"}, false); err != nil {
		t.Fatal(err)
	}
	// A listener's keystore is per broker only (Kafka's PerBrokerConfigs).
	if err := config.ValidateDynamic(map[string]string{"listener.name.ssl.ssl.keystore.location": "/k"}, false); err == nil ||
		err.Error() != "Cannot update these configs at default cluster level, broker id must be specified: Set(listener.name.ssl.ssl.keystore.location)" {
		t.Fatalf("keystore at <default>: %v", err)
	}
	if err := config.ValidateDynamic(map[string]string{"listener.name.ssl.ssl.keystore.location": "/k", "listener.name.ssl.ssl.keystore.password": "p"}, true); err != nil {
		t.Fatalf("keystore per broker: %v", err)
	}
}

// A component refusing an update: nothing of it is applied, to any component.
func TestValidateThenApply(t *testing.T) {
	m := New(static(t, map[string]string{}), nil)
	var applied []string
	m.RegisterFunc("a", []string{"log.retention.ms"}, func(next *config.Broker) { applied = append(applied, "a") })
	m.Register(Component{Name: "b", Keys: []string{"max.connections"},
		Validate: func(_, next *config.Broker) error {
			if next.ConnectionLimits.Max < 5 {
				return errors.New("too few")
			}
			return nil
		},
		Apply: func(next *config.Broker) { applied = append(applied, "b") }})
	m.RegisterFunc("c", []string{"compression.type"}, func(*config.Broker) { applied = append(applied, "c") })

	err := m.Update(map[string]string{"log.retention.ms": "5", "max.connections": "2"}, nil)
	if err == nil || !strings.Contains(err.Error(), "too few") {
		t.Fatalf("err %v", err)
	}
	if len(applied) != 0 || m.Current().LogRetentionMs == 5 || len(m.Layers().Defaults) != 0 {
		t.Fatalf("half applied: %v retention %d", applied, m.Current().LogRetentionMs)
	}
	if err := m.Check(config.DefaultEntity, map[string]string{"max.connections": "1"}); err == nil {
		t.Fatal("Check accepted what a component refuses")
	}
	if err := m.Update(map[string]string{"log.retention.ms": "5", "max.connections": "7"}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(applied, ",") != "a,b" { // c's key did not change
		t.Fatalf("applied %v", applied)
	}
	// Cross-key rule of the effective config: max.connections.per.ip=0 needs overrides.
	if err := m.Check("3", map[string]string{"max.connections.per.ip": "0"}); err == nil {
		t.Fatal("per-ip 0 without overrides accepted")
	}
}

// A znode holding non-dynamic keys (written by hand): they are dropped, the rest applies.
func TestUpdateDropsNonDynamic(t *testing.T) {
	m := New(static(t, map[string]string{}), nil)
	if err := m.Update(map[string]string{"broker.id": "9", "log.retention.ms": "77"}, nil); err != nil {
		t.Fatal(err)
	}
	if c := m.Current(); c.BrokerID != 3 || c.LogRetentionMs != 77 {
		t.Fatalf("id %d retention %d", c.BrokerID, c.LogRetentionMs)
	}
}

func TestChangeWritesKafkaLayoutAndWatcherApplies(t *testing.T) {
	store := metastore.NewMemory().Open()
	defer store.Close()
	m := New(static(t, map[string]string{}), nil)
	if err := m.Load(store); err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 4)
	m.RegisterFunc("retention", []string{"log.retention.ms"}, func(next *config.Broker) { got <- next.LogRetentionMs })
	w := Watch(store, m, nil)
	defer w.Close()

	if _, err := Change(store, config.DefaultEntity, config.PasswordEncoder{}, func(p map[string]string) error { p["log.retention.ms"] = "1234"; return nil }, nil, false); err != nil {
		t.Fatal(err)
	}
	data, _, err := store.Get("/config/brokers/<default>")
	if err != nil || string(data) != `{"version":1,"config":{"log.retention.ms":"1234"}}` {
		t.Fatalf("znode %s %v", data, err)
	}
	kids, err := store.Children(zkmeta.ConfigChangesPath)
	if err != nil || len(kids) != 1 {
		t.Fatalf("notifications %v %v", kids, err)
	}
	note, _, _ := store.Get(zkmeta.ConfigChangesPath + "/" + kids[0])
	if string(note) != `{"version":2,"entity_path":"brokers/<default>"}` {
		t.Fatalf("notification %s", note)
	}
	// validate-only and refused changes write nothing.
	if _, err := Change(store, "3", config.PasswordEncoder{}, func(p map[string]string) error { p["broker.id"] = "1"; return nil }, nil, false); err == nil {
		t.Fatal("broker.id accepted")
	}
	if _, err := Change(store, "3", config.PasswordEncoder{}, func(p map[string]string) error { p["log.retention.ms"] = "1"; return nil }, nil, true); err != nil {
		t.Fatal(err)
	}
	if ok, _ := store.Exists("/config/brokers/3"); ok {
		t.Fatal("validate-only or refused change wrote /config/brokers/3")
	}
	w.Changed("7") // another broker's entity: ignored
	w.Changed(config.DefaultEntity)
	select {
	case v := <-got:
		if v != 1234 {
			t.Fatalf("applied %d", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watcher did not apply the change")
	}
}

func TestDescribeSources(t *testing.T) {
	st := static(t, map[string]string{"log.retention.ms": "500", "max.connections": "100"})
	dyn := config.DynamicLayers{PerBroker: map[string]string{"log.retention.ms": "100"}, Defaults: map[string]string{"log.retention.ms": "200", "max.connections": "50"}}
	entries := map[string]config.ConfigEntry{}
	for _, e := range st.DescribeBrokerConfigsWith(dyn) {
		entries[e.Name] = e
	}
	r := entries["log.retention.ms"]
	if r.Value != "100" || r.Source != kmsg.ConfigSourceDynamicBrokerConfig || r.ReadOnly {
		t.Fatalf("log.retention.ms %+v", r)
	}
	var srcs []string
	for _, s := range r.Synonyms {
		srcs = append(srcs, s.Name+"="+s.Value+":"+s.Source.String())
	}
	want := "log.retention.ms=100:DYNAMIC_BROKER_CONFIG log.retention.ms=200:DYNAMIC_DEFAULT_BROKER_CONFIG log.retention.ms=500:STATIC_BROKER_CONFIG log.retention.hours=168:DEFAULT_CONFIG"
	if strings.Join(srcs, " ") != want {
		t.Fatalf("synonyms\n got %s\nwant %s", strings.Join(srcs, " "), want)
	}
	if c := entries["max.connections"]; c.Value != "50" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("max.connections %+v", c)
	}
	if c := entries["broker.id"]; !c.ReadOnly || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("broker.id %+v", c)
	}
	defs := config.DescribeDynamicDefaults(st.Raw, dyn.Defaults)
	if len(defs) != 2 || defs[0].Name != "log.retention.ms" || defs[0].Value != "200" || defs[0].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig ||
		defs[0].Synonyms[0].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || defs[0].Synonyms[1].Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("defaults %+v", defs)
	}
}
