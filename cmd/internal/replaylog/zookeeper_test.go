package replaylog

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/replication/zkstore"
	"gregor/test/zkharness"
)

// The seed article's form: --zookeeper finds the brokers (registered under
// /brokers/ids) when --broker-list is absent.
func TestReplayThroughZooKeeper(t *testing.T) {
	srv := zkharness.Start(t, zkharness.Options{})
	addr := cluster(t)
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	connect := srv.Addr() + "/kafka"
	s, err := zkstore.Open(connect, zkstore.Config{SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := zkmeta.BrokerInfo{ID: 1, JmxPort: -1, Timestamp: 1,
		Endpoints: []zkmeta.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: host, Port: int32(port)}}}
	if err := metastore.CreateAll(s, zkmeta.BrokerPath(1), b.Encode(), true); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errb bytes.Buffer
	n, err := Run(ctx, Options{ZooKeeper: connect, InputTopic: "in", OutputTopic: "out", Messages: -1, Threads: 1}, &errb)
	if err != nil || n != 30 {
		t.Fatalf("%d %v %q", n, err, errb.String())
	}
	if got := consume(t, addr, "out", 30); len(got) != 30 {
		t.Fatalf("out has %d records", len(got))
	}
}
