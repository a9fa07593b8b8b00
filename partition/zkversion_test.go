package partition_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
	"gregor/partition"
	"gregor/partition/partitiontest"
	"gregor/storage"
)

// versionedIsr is an IsrWriter with ZooKeeper's conditional write: it
// holds the partition state's ISR and version and refuses a write at any
// other version.
type versionedIsr struct {
	mu      sync.Mutex
	isr     []int32
	version int32
}

func (w *versionedIsr) AlterIsr(_ partition.TopicPartition, _ int32, newIsr []int32, zkVersion int32) (int32, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if zkVersion != w.version {
		return 0, errors.New("bad version")
	}
	w.isr, w.version = slices.Clone(newIsr), w.version+1
	return w.version, nil
}

func (w *versionedIsr) get() ([]int32, int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.isr), w.version
}

// TestSameEpochOlderZkVersionIgnored: a leader shrinks its ISR (znode
// version 0 → 1, same leader epoch); then the controller's LeaderAndIsr
// built before the shrink arrives (re-sent after a controller restart, or
// late through a backed-up channel): same epoch, version 0, the old ISR.
// The leader must keep the newer state; taking the old one made it
// believe the follower was in the ISR at version 0, so it never wrote
// the follower back and ZooKeeper's ISR stayed shrunk for good.
func TestSameEpochOlderZkVersionIgnored(t *testing.T) {
	sys := actors.NewSystem(nil)
	store := partitiontest.NewStore(t.TempDir())
	w := &versionedIsr{isr: []int32{1, 2}}
	m, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: store, BrokerID: 1,
		IsrWriter: w, ReplicaLagTimeMax: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); sys.Shutdown(); store.Close() })

	tp := partition.TopicPartition{Topic: "__consumer_offsets", Partition: 1}
	st := partition.LeaderAndIsr{TopicPartition: tp, Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, Replicas: []int32{1, 2},
		ZkVersion: 0, MinInsyncReplicas: 1, Config: storage.DefaultLogConfig()}
	if errs := m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{st}); len(errs) != 0 {
		t.Fatal(errs)
	}
	h, _ := m.Get(tp)
	// Follower 2 never fetches: the leader shrinks the ISR to itself.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if isr, v := w.get(); slices.Equal(isr, []int32{1}) && v == 1 {
			break
		}
		if time.Now().After(deadline) {
			isr, v := w.get()
			t.Fatalf("no shrink: ISR %v at version %d", isr, v)
		}
		time.Sleep(10 * time.Millisecond) // the shrink is timer-driven; no event to await
	}

	// The controller's state from before the shrink, same leader epoch.
	errs := m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{st})
	if errs[tp] != kerr.FencedLeaderEpoch {
		t.Fatalf("older state at the same epoch: %v, want FENCED_LEADER_EPOCH", errs)
	}
	if s := h.State(); !slices.Equal(s.ISR, []int32{1}) || s.ZkVersion != 1 {
		t.Fatalf("leader's state after the older LeaderAndIsr: ISR %v zkVersion %d, want [1] 1", s.ISR, s.ZkVersion)
	}
	if v := h.View(); !slices.Equal(v.ISR, []int32{1}) {
		t.Fatalf("leader's ISR %v, want [1]", v.ISR)
	}

	// The follower catches up: the leader writes it back at version 1.
	// The write runs off the actor: await its commit on the leader (the
	// Handle's state takes the written ISR and version when the result is
	// back), bounded.
	if kerrv := h.FollowerFetch(2, h.View().HighWatermark); kerrv != nil {
		t.Fatal(kerrv)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if s := h.State(); slices.Equal(s.ISR, []int32{1, 2}) && s.ZkVersion == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expansion not committed: leader state %v", h.State())
		}
		time.Sleep(time.Millisecond) // the commit is an actor message; the Handle has no event for it
	}
	if isr, v := w.get(); !slices.Equal(isr, []int32{1, 2}) || v != 2 {
		t.Fatalf("ZooKeeper ISR %v at version %d after the follower caught up, want [1 2] at 2", isr, v)
	}

	// A newer version at the same epoch (the controller's own write) is taken.
	newer := st
	newer.ISR, newer.ZkVersion = []int32{1}, 3
	if errs := m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{newer}); len(errs) != 0 {
		t.Fatal(errs)
	}
	if s := h.State(); !slices.Equal(s.ISR, []int32{1}) || s.ZkVersion != 3 {
		t.Fatalf("newer state at the same epoch not taken: ISR %v zkVersion %d", s.ISR, s.ZkVersion)
	}
}
