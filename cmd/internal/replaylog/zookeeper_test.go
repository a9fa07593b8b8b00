package replaylog

import (
	"bytes"
	"context"
	"testing"
	"time"

	"gregor/cmd/internal/clientutil/clienttest"
)

// The seed article's form: --zookeeper finds the brokers (registered under
// /brokers/ids) when --broker-list is absent.
func TestReplayThroughZooKeeper(t *testing.T) {
	addr := cluster(t)
	connect := clienttest.ZooKeeperWithBroker(t, addr)
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
