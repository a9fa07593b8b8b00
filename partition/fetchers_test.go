package partition_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"gregor/actors"
	"gregor/partition"
	"gregor/partition/partitiontest"
	"gregor/storage"
)

// recordingFetchers is a FetcherControl that records its calls and checks
// that the lookup it was built with already hosts every partition it is
// told to follow.
type recordingFetchers struct {
	lookup partition.ReplicaLookup
	mu     sync.Mutex
	calls  []string
}

func (f *recordingFetchers) Follow(tp partition.TopicPartition, leader, epoch int32) {
	_, hosted := f.lookup.Get(tp)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s follow %d hosted=%t", tp, leader, hosted))
}

func (f *recordingFetchers) Unfollow(tps ...partition.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, tp := range tps {
		f.calls = append(f.calls, tp.String()+" unfollow")
	}
}

// TestNewFetchersBuiltWithTheManager: the replica manager builds its
// fetcher control at construction with itself as the partition lookup
// (no setter afterwards), and drives it from the first LeaderAndIsr on.
func TestNewFetchersBuiltWithTheManager(t *testing.T) {
	sys := actors.NewSystem(nil)
	store := partitiontest.NewStore(t.TempDir())
	var rec *recordingFetchers
	m, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: store, BrokerID: 1,
		NewFetchers: func(r partition.ReplicaLookup) (partition.FetcherControl, error) {
			rec = &recordingFetchers{lookup: r}
			return rec, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); sys.Shutdown(); store.Close() })
	if rec == nil || rec.lookup != partition.ReplicaLookup(m) {
		t.Fatalf("NewFetchers got lookup %v, want the manager being built", rec)
	}
	apply := func(leader, epoch int32) {
		t.Helper()
		if errs := m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp0, Leader: leader, LeaderEpoch: epoch,
			ISR: []int32{1, 2}, Replicas: []int32{1, 2}, Config: storage.DefaultLogConfig()}}); len(errs) != 0 {
			t.Fatal(errs)
		}
	}
	apply(2, 1) // follower of broker 2
	apply(1, 2) // leader
	if err := m.StopReplicas([]partition.TopicPartition{tp0}, false); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	got := slices.Clone(rec.calls)
	rec.mu.Unlock()
	want := []string{tp0.String() + " follow 2 hosted=true", tp0.String() + " unfollow", tp0.String() + " unfollow"}
	if !slices.Equal(got, want) {
		t.Fatalf("fetcher calls %q, want %q", got, want)
	}
}

// TestNewFetchersErrorFailsNewManager: a fetcher manager that cannot be
// built fails NewManager, which stops the replica-manager actor it
// spawned (a second NewManager on the same system can take its name).
func TestNewFetchersErrorFailsNewManager(t *testing.T) {
	sys := actors.NewSystem(nil)
	t.Cleanup(sys.Shutdown)
	store := partitiontest.NewStore(t.TempDir())
	t.Cleanup(func() { store.Close() })
	boom := errors.New("boom")
	_, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: store, BrokerID: 1,
		NewFetchers: func(partition.ReplicaLookup) (partition.FetcherControl, error) { return nil, boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("NewManager: %v, want %v", err, boom)
	}
	m, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: store, BrokerID: 1})
	if err != nil {
		t.Fatalf("second NewManager after the failed one: %v", err)
	}
	m.Close()
}
