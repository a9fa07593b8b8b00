package controller

import (
	"testing"
	"time"

	"gregor/config"
	"gregor/replication/metadata"
)

// TestReadersNeverWaitForTheActor: while the controller actor is busy
// (here: held inside a call), a standby broker still applies an
// UpdateMetadata from the active controller and answers ClusterID and
// Epoch: none of them waits for the actor's current event.
func TestReadersNeverWaitForTheActor(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	if res := e.c.CreateTopics([]NewTopic{{Name: "t", NumPartitions: 2, ReplicationFactor: 1}}, false); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	cfg1, err := config.Parse(map[string]string{"broker.id": "1", "advertised.listeners": "PLAINTEXT://127.0.0.1:9093"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	standby := New(e.store, &fakeRM{}, cfg1, Options{})
	if err := standby.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(standby.Close)
	if standby.ActiveEpoch() != 0 {
		t.Fatal("the second controller is active")
	}
	entered, release := make(chan struct{}), make(chan struct{})
	callDone := make(chan error, 1)
	go func() { callDone <- standby.call(func() { close(entered); <-release }) }()
	<-entered
	defer func() { close(release); <-callDone }()

	req := metadata.ToUpdateMetadata(e.c.Snapshot(), 0, e.c.Epoch(), nil)
	answered := make(chan int16, 1)
	go func() { answered <- standby.HandleUpdateMetadata(req).ErrorCode }()
	select {
	case code := <-answered:
		if code != 0 {
			t.Fatalf("UpdateMetadata answered error %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("UpdateMetadata waited for the busy controller actor")
	}
	snap := standby.Snapshot()
	if snap.ControllerID != 0 || snap.ClusterID != e.c.ClusterID() || len(snap.Topics["t"].Partitions) != 2 {
		t.Fatalf("standby cache after UpdateMetadata: controller %d cluster %q topics %v", snap.ControllerID, snap.ClusterID, snap.Topics)
	}
	if standby.ClusterID() != e.c.ClusterID() || standby.Epoch() != 0 || e.c.Epoch() != 1 {
		t.Fatalf("cluster id %q / %q, epochs %d / %d", standby.ClusterID(), e.c.ClusterID(), standby.Epoch(), e.c.Epoch())
	}
}
