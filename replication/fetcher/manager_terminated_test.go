package fetcher

import (
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"gregor/actors"
	"gregor/partition"
)

type noReplicas struct{}

func (noReplicas) Get(partition.TopicPartition) (*partition.Handle, bool) { return nil, false }

type noEndpoints struct{}

func (noEndpoints) BrokerEndpoint(int32) (string, int32, bool) { return "", 0, false }

// fetcherNames lists the live fetcher actors' names.
func fetcherNames(sys *actor.ActorSystem) []string {
	var out []string
	for _, a := range actors.InstrumentsOf(sys).Actors() {
		if strings.HasPrefix(a.Path, ManagerName+"/fetcher-") {
			out = append(out, a.Path)
		}
	}
	return out
}

// startUnwiredManager starts a fetcher-manager on a fresh actor system,
// broker 1, with no replicas and no leader endpoints (so its fetchers
// never fetch) and an hour's backoff; both stop with the test.
func startUnwiredManager(t *testing.T) (*actor.ActorSystem, *Manager) {
	t.Helper()
	sys := actors.NewSystem(nil)
	t.Cleanup(sys.Shutdown)
	m, err := Start(Config{System: sys, BrokerID: 1, Replicas: noReplicas{}, Endpoints: noEndpoints{}, Backoff: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return sys, m
}

// followLeader3 has m follow tp from leader 3 (epoch 0) and checks it is
// assigned to fetcher-3-0.
func followLeader3(t *testing.T, m *Manager, tp partition.TopicPartition) {
	t.Helper()
	m.Follow(tp, 3, 0)
	if got := m.Assigned(tp); got != "fetcher-3-0" {
		t.Fatalf("assigned %q", got)
	}
}

// onlyFetcher30For checks, every 20 ms for d, that the one live fetcher is
// fetcher-3-0.
func onlyFetcher30For(t *testing.T, sys *actor.ActorSystem, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if names := fetcherNames(sys); len(names) != 1 || names[0] != ManagerName+"/fetcher-3-0" {
			t.Fatalf("fetchers %v, want the one fetcher-3-0 fetching both partitions", names)
		}
	}
}

// TestStaleTerminatedKeepsSameNamedFetcher: a fetcher the manager stopped
// frees its name before its Terminated arrives, so the key's next fetcher
// can already run under the same name when it does. That Terminated (an
// equal PID of another incarnation) must not drop the live fetcher: the
// manager then spawned a second fetcher for the key, and the next
// removal's bookkeeping stopped the wrong one, leaving partitions that
// nobody fetched.
func TestStaleTerminatedKeepsSameNamedFetcher(t *testing.T) {
	sys, m := startUnwiredManager(t)
	tp1 := partition.TopicPartition{Topic: "__consumer_offsets", Partition: 1}
	tp2 := partition.TopicPartition{Topic: "chaos", Partition: 2}
	followLeader3(t, m, tp1)
	// The Terminated of an earlier "fetcher-3-0", arriving late.
	sys.Root.Send(m.pid, &actor.Terminated{Who: actor.NewPID(sys.Address(), ManagerName+"/fetcher-3-0")})
	followLeader3(t, m, tp2)
	// Actors enter the instruments' list when they start (asynchronously):
	// wait for fetcher-3-0, then make sure no second fetcher shows up.
	deadline := time.Now().Add(5 * time.Second)
	for len(fetcherNames(sys)) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	onlyFetcher30For(t, sys, 500*time.Millisecond)
}
