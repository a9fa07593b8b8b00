package topics

import (
	"strings"
	"testing"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

func rackStore(t *testing.T, racks map[int32]string) metastore.Store {
	t.Helper()
	s := metastore.NewMemory().Open()
	if err := zkmeta.EnsurePersistentPaths(s); err != nil {
		t.Fatal(err)
	}
	for id, r := range racks {
		b := zkmeta.BrokerInfo{ID: id, JmxPort: -1, Timestamp: 1, Rack: r,
			Endpoints: []zkmeta.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9090 + id}}}
		if err := s.Create(zkmeta.BrokerPath(id), b.Encode(), true); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// --zookeeper --create places replicas rack-aware when every broker has
// broker.rack, refuses mixed rack information unless --disable-rack-aware.
func TestZkCreateRackAware(t *testing.T) {
	racks := map[int32]string{1: "a", 2: "a", 3: "b", 4: "b"}
	a := &ZkAdmin{Store: rackStore(t, racks)}
	if err := a.CreateTopic(t.Context(), "r", 8, 2, nil, nil); err != nil {
		t.Fatal(err)
	}
	data, _, err := a.Store.Get(zkmeta.TopicPath("r"))
	if err != nil {
		t.Fatal(err)
	}
	asg, err := zkmeta.DecodeTopicAssignment("r", data)
	if err != nil {
		t.Fatal(err)
	}
	for p, rs := range asg.Partitions {
		if len(rs) != 2 || racks[rs[0]] == racks[rs[1]] {
			t.Fatalf("partition %d replicas %v share a rack", p, rs)
		}
	}

	mixed := &ZkAdmin{Store: rackStore(t, map[int32]string{1: "a", 2: ""})}
	err = mixed.CreateTopic(t.Context(), "m", 1, 2, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "Not all brokers have rack information. Add --disable-rack-aware") {
		t.Fatalf("mixed racks: %v", err)
	}
	mixed.DisableRackAware = true
	if err := mixed.CreateTopic(t.Context(), "m", 1, 2, nil, nil); err != nil {
		t.Fatalf("--disable-rack-aware: %v", err)
	}
	if err := (&Options{BootstrapServer: "h:1", Create: true, Topic: "x", Partitions: -1, ReplicationFactor: -1, DisableRackAware: true}).Check(); err == nil {
		t.Fatal("--disable-rack-aware with --bootstrap-server accepted; the broker would ignore it")
	}
}
