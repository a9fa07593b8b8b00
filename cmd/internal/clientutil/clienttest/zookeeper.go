package clienttest

import (
	"net"
	"strconv"
	"testing"
	"time"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/replication/zkstore"
	"gregor/test/zkharness"
)

// ZooKeeperWithBroker starts a ZooKeeper server (stopped when t ends) and
// registers broker 1 under /brokers/ids with one PLAINTEXT endpoint at addr
// ("host:port", e.g. a Cluster's), as a broker would: an ephemeral znode
// whose session stays open until t ends. It returns the
// --zookeeper connect string, chroot /kafka included.
func ZooKeeperWithBroker(t testing.TB, addr string) string {
	t.Helper()
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		t.Fatal(err)
	}
	srv := zkharness.Start(t, zkharness.Options{})
	connect := srv.Addr() + "/kafka"
	s, err := zkstore.Open(connect, zkstore.Config{SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() }) // the registration is ephemeral: it lives as long as this session
	b := zkmeta.BrokerInfo{ID: 1, JmxPort: -1, Timestamp: 1,
		Endpoints: []zkmeta.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: host, Port: int32(port)}}}
	if err := metastore.CreateAll(s, zkmeta.BrokerPath(1), b.Encode(), true); err != nil {
		t.Fatal(err)
	}
	return connect
}
