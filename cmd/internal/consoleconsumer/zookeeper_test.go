package consoleconsumer

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil/clienttest"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

func register(t *testing.T, s metastore.Store, id int32, eps ...zkmeta.Endpoint) {
	t.Helper()
	b := zkmeta.BrokerInfo{ID: id, JmxPort: -1, Timestamp: 1, Endpoints: eps}
	if err := metastore.CreateAll(s, zkmeta.BrokerPath(id), b.Encode(), true); err != nil {
		t.Fatal(err)
	}
}

func TestBrokerAddrsOrderAndListener(t *testing.T) {
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := brokerAddrs(s, "embedded"); err == nil || !strings.Contains(err.Error(), "no broker") {
		t.Fatalf("empty /brokers/ids: err = %v", err)
	}
	register(t, s, 10, zkmeta.Endpoint{ListenerName: "SSL", SecurityProtocol: "SSL", Host: "h10", Port: 9093},
		zkmeta.Endpoint{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "h10", Port: 9092})
	register(t, s, 2, zkmeta.Endpoint{ListenerName: "INTERNAL", SecurityProtocol: "SASL_PLAINTEXT", Host: "::1", Port: 9094})
	got, err := brokerAddrs(s, "embedded")
	if err != nil || got != "[::1]:9094,h10:9092" {
		t.Fatalf("brokerAddrs = %q, %v; want broker 2 then 10, PLAINTEXT preferred", got, err)
	}
}

// TestConsumeThroughZooKeeper: the seeds' `console-consumer --zookeeper`
// form finds the broker in ZooKeeper and consumes from it.
func TestConsumeThroughZooKeeper(t *testing.T) {
	addr := setupCluster(t, 1, &kgo.Record{Value: []byte("one")}, &kgo.Record{Value: []byte("two")})
	connect := clienttest.ZooKeeperWithBroker(t, addr)

	code, out, errs := runTool(t, Options{ZooKeeper: connect, Topic: "t", FromBeginning: true, MaxMessages: 2})
	if code != 0 || out != "one\ntwo\n" {
		t.Fatalf("consume via --zookeeper: %d %q %q", code, out, errs)
	}
	// Nothing registered under another chroot: a clear error, exit 1.
	code, _, errs = runTool(t, Options{ZooKeeper: strings.TrimSuffix(connect, "/kafka") + "/empty", Topic: "t", MaxMessages: 1})
	if code != 1 || !strings.Contains(errs, "no broker is registered") {
		t.Fatalf("empty chroot: %d %q", code, errs)
	}
}
