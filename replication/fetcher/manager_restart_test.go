package fetcher

import (
	"testing"
	"time"

	"gregor/actors"
	"gregor/partition"
)

// TestManagerRestartKeepsFetchers: a panic in the fetcher-manager restarts
// that actor only. protoactor restarts an actor by stopping its children
// first, and the manager kept its assignment in the instance a restart
// replaces: every follower stopped fetching until its next LeaderAndIsr.
// Its fetchers must keep running, with their partitions, and the manager
// must still know who fetches what.
func TestManagerRestartKeepsFetchers(t *testing.T) {
	sys, m := startUnwiredManager(t)
	tp1 := partition.TopicPartition{Topic: "orders", Partition: 1}
	tp2 := partition.TopicPartition{Topic: "orders", Partition: 2}
	followLeader3(t, m, tp1)
	in := actors.InstrumentsOf(sys)
	const path = ManagerName + "/fetcher-3-0"
	eventually(t, 5*time.Second, "fetcher-3-0 started", func() bool { _, ok := in.Actor(path); return ok })
	before, _ := in.Actor(path)

	if _, err := in.Inject(actors.ActorFault{Action: actors.FaultKill, Actor: ManagerName}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "fetcher-manager restart counted", func() bool { i, _ := in.Actor(ManagerName); return i.Restarts == 1 })
	if got := m.Assigned(tp1); got != "fetcher-3-0" {
		t.Fatalf("after the manager restart %v is assigned to %q, want fetcher-3-0", tp1, got)
	}
	if i, ok := in.Actor(path); !ok || i.Received < before.Received {
		t.Fatalf("fetcher-3-0 after the manager restart: %+v (live %v), want the same fetcher running", i, ok)
	}
	followLeader3(t, m, tp2)
	onlyFetcher30For(t, sys, 300*time.Millisecond)
	// The load bookkeeping survived too: the fetcher stops once idle.
	m.Unfollow(tp1, tp2)
	eventually(t, 5*time.Second, "idle fetcher stopped", func() bool { return len(fetcherNames(sys)) == 0 })
}
