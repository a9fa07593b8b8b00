package configs

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// zkStore is an embedded metastore with topic "t" registered as a broker
// would have (assignment znode, config znode with one override).
func zkStore(t *testing.T) metastore.Store {
	t.Helper()
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := zkmeta.EnsurePersistentPaths(s); err != nil {
		t.Fatal(err)
	}
	a := zkmeta.TopicAssignment{Partitions: map[int32][]int32{0: {1}}}
	if err := s.Create(zkmeta.TopicPath("t"), a.Encode(), false); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(zkmeta.TopicConfigPath("t"), zkmeta.EncodeConfig(map[string]string{"segment.bytes": "1048576"}), false); err != nil {
		t.Fatal(err)
	}
	return s
}

func runZk(t *testing.T, s metastore.Store, o Options) (string, error) {
	t.Helper()
	o.ZooKeeper = "127.0.0.1:1" // resolve wants one of the two; the store is given
	if err := o.resolve(); err != nil {
		return "", err
	}
	var out bytes.Buffer
	err := RunZooKeeper(o, s, &out)
	return out.String(), err
}

func TestZooKeeperDescribeAlter(t *testing.T) {
	s := zkStore(t)
	out, err := runZk(t, s, Options{EntityType: Topics, EntityName: "t", Describe: true})
	if err != nil || out != "Configs for topic 't' are segment.bytes=1048576\n" {
		t.Fatalf("describe: %q %v", out, err)
	}
	out, err = runZk(t, s, Options{Topic: "t", Alter: true, AddConfig: "retention.ms=1000,cleanup.policy=[compact,delete]", DeleteConfig: "segment.bytes"})
	if err != nil || out != "Completed updating config for entity: topic 't'.\n" {
		t.Fatalf("alter: %q %v", out, err)
	}
	data, _, _ := s.Get(zkmeta.TopicConfigPath("t"))
	if cfg, _ := zkmeta.DecodeConfig(data); len(cfg) != 2 || cfg["retention.ms"] != "1000" || cfg["cleanup.policy"] != "compact,delete" {
		t.Fatalf("/config/topics/t = %s", data)
	}
	kids, _ := s.Children(zkmeta.ConfigChangesPath)
	if len(kids) != 1 {
		t.Fatalf("change notifications %v, want one", kids)
	}
	note, _, _ := s.Get(zkmeta.ConfigChangesPath + "/" + kids[0])
	if string(note) != `{"version":2,"entity_path":"topics/t"}` {
		t.Fatalf("notification %s", note)
	}
	// Without a name: every topic with a config znode, sorted.
	if err := s.Create(zkmeta.TopicConfigPath("a"), zkmeta.EncodeConfig(nil), false); err != nil {
		t.Fatal(err)
	}
	out, err = runZk(t, s, Options{EntityType: Topics, Describe: true})
	if err != nil || out != "Configs for topic 'a' are \nConfigs for topic 't' are cleanup.policy=compact,delete,retention.ms=1000\n" {
		t.Fatalf("describe all: %q %v", out, err)
	}
}

func TestZooKeeperAlterErrors(t *testing.T) {
	s := zkStore(t)
	for _, c := range []struct {
		o    Options
		want string
		code *kerr.Error
	}{
		{Options{Topic: "t", Alter: true, DeleteConfig: "retention.ms,segment.bytes,flush.ms"}, "Invalid config(s): retention.ms,flush.ms", nil},
		{Options{Topic: "t", Alter: true, AddConfig: "retention.ms=soon"}, "retention.ms", kerr.InvalidConfig},
		{Options{Topic: "t", Alter: true, AddConfig: "no.such.config=1"}, "no.such.config", kerr.InvalidConfig},
		{Options{Topic: "missing", Alter: true, AddConfig: "retention.ms=1"}, "Topic 'missing' does not exist.", kerr.UnknownTopicOrPartition},
		{Options{Broker: "1", Alter: true, AddConfig: "broker.id=2"}, "Cannot update these configs dynamically: Set(broker.id)", nil},
	} {
		_, err := runZk(t, s, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.code != nil && !errors.Is(err, c.code)) {
			t.Errorf("%+v: %v, want %q (%v)", c.o, err, c.want, c.code)
		}
	}
	data, _, _ := s.Get(zkmeta.TopicConfigPath("t"))
	if cfg, _ := zkmeta.DecodeConfig(data); len(cfg) != 1 || cfg["segment.bytes"] != "1048576" {
		t.Fatalf("failed alters changed /config/topics/t: %s", data)
	}
	if kids, _ := s.Children(zkmeta.ConfigChangesPath); len(kids) != 0 {
		t.Fatalf("failed alters wrote notifications %v", kids)
	}
}

// Brokers with --zookeeper (Kafka 2.x): written in Kafka's layout with a
// notification; keys other than the replication throttles are refused
// while the broker (for the default: any broker) is registered.
func TestZooKeeperBrokers(t *testing.T) {
	s := zkStore(t)
	out, err := runZk(t, s, Options{Broker: "1", Alter: true, AddConfig: "log.retention.ms=1000,leader.replication.throttled.rate=500"})
	if err != nil || out != "Completed updating config for entity: brokers '1'.\n" {
		t.Fatalf("alter: %q %v", out, err)
	}
	data, _, _ := s.Get("/config/brokers/1")
	if string(data) != `{"version":1,"config":{"leader.replication.throttled.rate":"500","log.retention.ms":"1000"}}` {
		t.Fatalf("znode %s", data)
	}
	out, err = runZk(t, s, Options{BrokerDefaults: true, Alter: true, AddConfig: "max.connections=50"})
	if err != nil || out != "Completed updating config for entity: default brokers.\n" {
		t.Fatalf("alter default: %q %v", out, err)
	}
	out, err = runZk(t, s, Options{EntityType: Brokers, Describe: true})
	if err != nil || out != "Configs for brokers '1' are leader.replication.throttled.rate=500,log.retention.ms=1000\nConfigs for default brokers are max.connections=50\n" {
		t.Fatalf("describe: %q %v", out, err)
	}
	if kids, _ := s.Children(zkmeta.ConfigChangesPath); len(kids) != 2 {
		t.Fatalf("notifications %v", kids)
	}
	if err := metastore.CreateAll(s, zkmeta.BrokerPath(1), []byte("{}"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := runZk(t, s, Options{Broker: "1", Alter: true, AddConfig: "log.retention.ms=5"}); err == nil ||
		!strings.Contains(err.Error(), "--bootstrap-server option must be specified to update broker configs Set(log.retention.ms) when broker 1 is running.") {
		t.Fatalf("running broker: %v", err)
	}
	if _, err := runZk(t, s, Options{BrokerDefaults: true, Alter: true, AddConfig: "max.connections=5"}); err == nil ||
		!strings.Contains(err.Error(), "for default cluster if any broker is running.") {
		t.Fatalf("running cluster: %v", err)
	}
	if _, err := runZk(t, s, Options{Broker: "1", Alter: true, AddConfig: "follower.replication.throttled.rate=9"}); err != nil {
		t.Fatalf("throttle while running: %v", err)
	}
}

func TestZooKeeperAndBootstrapExclusive(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(t.Context(), Options{BootstrapServer: "127.0.0.1:1", ZooKeeper: "127.0.0.1:1", Topic: "t", Describe: true}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "Only one of --bootstrap-server or --zookeeper") {
		t.Fatalf("%d %q", code, errb.String())
	}
	code = Main(t.Context(), Options{ZooKeeper: "127.0.0.1:1/bad//chroot", Topic: "t", Describe: true}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "--zookeeper") {
		t.Fatalf("bad connect: %d %q", code, errb.String())
	}
}
