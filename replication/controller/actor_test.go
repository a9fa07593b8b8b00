package controller

import (
	"errors"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// startWithSystem starts a single-node controller whose actor lives in a
// system the test can inject faults into.
func startWithSystem(t *testing.T) (*env, *actor.ActorSystem) {
	t.Helper()
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sys := actors.NewSystem(nil)
	rm := &fakeRM{}
	c := New(s, rm, testConfig(), Options{System: sys})
	c.rejoinInterval = 50 * time.Millisecond
	if err := c.Start(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	e := &env{store: s, rm: rm, c: c}
	t.Cleanup(func() { e.stop(); sys.Shutdown() })
	return e, sys
}

// waitFor polls cond every 10 ms for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (f *fakeRM) count(topic string, p int32) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.applied {
		if s.Topic == topic && s.Partition == p {
			n++
		}
	}
	return n
}

// TestActorKillRecovers: a /faults kill of the controller actor restarts
// it; the restarted actor takes over again as a new controller would
// (controller epoch 2, LeaderAndIsr resent for every partition), it shows
// one restart in the live tree, and requests work afterwards.
func TestActorKillRecovers(t *testing.T) {
	e, sys := startWithSystem(t)
	in := actors.InstrumentsOf(sys)
	info, ok := in.Actor(ActorName)
	if !ok || info.Kind != "controller" {
		t.Fatalf("controller actor in the live tree: %+v %v", info, ok)
	}
	if res := e.c.CreateTopics([]NewTopic{{Name: "t", NumPartitions: 2, ReplicationFactor: 1}}, false); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	before := e.rm.count("t", 1)
	if _, err := in.Inject(actors.ActorFault{Action: actors.FaultKill, Kind: "controller"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "epoch 2", func() bool { return e.c.Epoch() == 2 })
	waitFor(t, "LeaderAndIsr resent", func() bool { return e.rm.count("t", 1) > before })
	if last, _ := e.rm.last("t", 1); last.ControllerEpoch != 2 || last.Leader != 0 {
		t.Fatalf("resent state %+v", last)
	}
	if info, _ := in.Actor(ActorName); info.Restarts != 1 {
		t.Fatalf("restarts %d", info.Restarts)
	}
	if got := in.RestartsByKind()["controller"]; got != 1 {
		t.Fatalf("restarts by kind %d", got)
	}
	data, _, _ := e.store.Get(zkmeta.ControllerEpochPath)
	if ep, _ := zkmeta.DecodeControllerEpoch(data); ep != 2 {
		t.Fatalf("/controller_epoch %s", data)
	}
	if res := e.c.CreateTopics([]NewTopic{{Name: "u", NumPartitions: 1, ReplicationFactor: 1}}, false); res[0].Err != nil {
		t.Fatalf("create after restart: %v", res[0].Err)
	}
	if snap := e.c.Snapshot(); snap.Topics["u"] == nil || snap.Topics["t"] == nil || snap.ControllerID != 0 {
		t.Fatalf("snapshot after restart: %+v", snap)
	}
	// The restarted controller still reacts to watches: a topic written
	// straight into ZooKeeper (as `topics --zookeeper --create` does) gets a leader.
	a := zkmeta.TopicAssignment{Partitions: map[int32][]int32{0: {0}}, TopicID: zkmeta.RandomUUID()}
	if err := metastore.CreateAll(e.store, zkmeta.TopicPath("zk"), a.Encode(), false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "topic created through ZooKeeper", func() bool { return e.rm.count("zk", 0) > 0 })
}

// TestCallPanicAnswersRetriable: a request whose handling panics is
// answered with NOT_CONTROLLER (never left waiting), the actor restarts,
// and the next request succeeds.
func TestCallPanicAnswersRetriable(t *testing.T) {
	e, sys := startWithSystem(t)
	err := e.c.call(func() { panic("boom") })
	if !errors.Is(err, kerr.NotController) {
		t.Fatalf("panicking call: %v", err)
	}
	waitFor(t, "restart", func() bool { return actors.InstrumentsOf(sys).RestartsByKind()["controller"] == 1 })
	if res := e.c.CreateTopics([]NewTopic{{Name: "after", NumPartitions: 1, ReplicationFactor: 1}}, false); res[0].Err != nil {
		t.Fatalf("create after panic: %v", res[0].Err)
	}
}

// TestActorGiveUpResignsAndRejoins: past ActorMaxRestarts failures the
// actor is stopped; the broker resigns /controller, requests get
// NOT_CONTROLLER, and a fresh actor rejoins the election and becomes
// controller again (the only broker).
func TestActorGiveUpResignsAndRejoins(t *testing.T) {
	e, sys := startWithSystem(t)
	in := actors.InstrumentsOf(sys)
	if _, err := in.Inject(actors.ActorFault{Action: actors.FaultKill, Actor: ActorName, Count: ActorMaxRestarts + 1}); err != nil {
		t.Fatal(err)
	}
	// The kills arrive together: each restart abandons the recovery of
	// the one before while it waits for the store (turn.go), so how many
	// of them bumped the epoch varies; the election the respawned actor
	// wins after resigning bumps it once more, past 1.
	waitFor(t, "rejoined as controller", func() bool {
		_, ok := in.Actor(ActorName)
		return ok && e.c.Epoch() > 1 && e.c.Snapshot().ControllerID == 0
	})
	data, _, _ := e.store.Get(zkmeta.ControllerEpochPath)
	if ep, _ := zkmeta.DecodeControllerEpoch(data); ep != e.c.Epoch() {
		t.Fatalf("/controller_epoch %d, controller epoch %d", ep, e.c.Epoch())
	}
	if res := e.c.CreateTopics([]NewTopic{{Name: "back", NumPartitions: 1, ReplicationFactor: 1}}, false); res[0].Err != nil {
		t.Fatalf("create after rejoin: %v", res[0].Err)
	}
	data, _, err := e.store.Get(zkmeta.ControllerPath)
	if id, _ := zkmeta.DecodeController(data); err != nil || id != 0 {
		t.Fatalf("/controller %s %v", data, err)
	}
}

// TestCallAfterCloseIsNotController: a closed controller answers
// NOT_CONTROLLER at once.
func TestCallAfterCloseIsNotController(t *testing.T) {
	e, _ := startWithSystem(t)
	e.c.Close()
	if err := e.c.DeleteTopics([]string{"x"})[0]; !errors.Is(err, kerr.NotController) {
		t.Fatalf("after close: %v", err)
	}
}
