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
	"gregor/storage/record"
)

// gatedIsr is an IsrWriter whose writes block until release is closed, as
// a frozen ZooKeeper would, then write conditionally on the version as
// ZooKeeper does; started receives each proposed ISR.
type gatedIsr struct {
	started chan []int32
	release chan struct{}
	mu      sync.Mutex
	version int32
	writes  int // successful ones
}

func (w *gatedIsr) AlterIsr(_ partition.TopicPartition, _ int32, newIsr []int32, zkVersion int32) (int32, error) {
	w.started <- slices.Clone(newIsr)
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	if zkVersion != w.version {
		return 0, errors.New("bad version")
	}
	w.version++
	w.writes++
	return w.version, nil
}

func newGated(t *testing.T) (*partition.Manager, *gatedIsr, *partition.Handle) {
	t.Helper()
	sys := actors.NewSystem(nil)
	store := partitiontest.NewStore(t.TempDir())
	w := &gatedIsr{started: make(chan []int32, 8), release: make(chan struct{})}
	m, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: store, BrokerID: 1, IsrWriter: w,
		ReplicaLagTimeMax: 100 * time.Millisecond, Backoff: actors.BackoffStrategy{Initial: time.Millisecond, Max: 5 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-w.release:
		default:
			close(w.release) // Close waits for the write goroutines
		}
		m.Close()
		sys.Shutdown()
		store.Close()
	})
	tp := partition.TopicPartition{Topic: "t", Partition: 0}
	st := partition.LeaderAndIsr{TopicPartition: tp, Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, Replicas: []int32{1, 2},
		MinInsyncReplicas: 1, Config: storage.DefaultLogConfig()}
	if errs := m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{st}); len(errs) != 0 {
		t.Fatal(errs)
	}
	h, _ := m.Get(tp)
	return m, w, h
}

// awaitShrink waits for the leader's first proposal, [1] (follower 2
// never fetches).
func awaitShrink(t *testing.T, w *gatedIsr) {
	t.Helper()
	select {
	case isr := <-w.started:
		if !slices.Equal(isr, []int32{1}) {
			t.Fatalf("proposed ISR %v, want [1]", isr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no shrink proposed")
	}
}

func send(t *testing.T, h *partition.Handle, acks int16, b []byte) chan partition.ProduceResult {
	t.Helper()
	hdr, _, err := record.Validate(b)
	if err != nil {
		t.Fatal(err)
	}
	reply := make(chan partition.ProduceResult, 1)
	h.Produce(&partition.Produce{Batch: b, Header: hdr, Acks: acks, Reply: reply})
	return reply
}

// TestIsrWriteDoesNotBlockActor: while a shrink is being written (the
// IsrWriter blocks), the leader answers acks=1 produces and follower
// fetches, serves with the committed ISR, and holds an acks=-1 produce
// for the lagging replica still in it; once the write lands the ISR is
// committed and the acks=-1 produce completes. Before, the actor itself
// waited in AlterIsr and answered nothing meanwhile.
func TestIsrWriteDoesNotBlockActor(t *testing.T) {
	_, w, h := newGated(t)
	awaitShrink(t, w)
	waiting := send(t, h, -1, batch(t, 3, nil))
	select {
	case r := <-send(t, h, 1, batch(t, 2, nil)):
		if r.Err != nil || r.BaseOffset != 3 {
			t.Fatalf("acks=1 during the ISR write: %+v, want offset 3", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("acks=1 produce not answered while the ISR write is blocked")
	}
	if err := h.FollowerFetch(3, 0); err != kerr.NotLeaderForPartition {
		t.Fatalf("fetch from an unassigned replica during the write: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
	// The actor has handled everything sent after the acks=-1 produce:
	// had it counted the ISR as shrunk, its reply would be there.
	select {
	case r := <-waiting:
		t.Fatalf("acks=-1 answered %+v with the shrink only proposed (the committed ISR still holds follower 2)", r)
	default:
	}
	if v := h.View(); !slices.Equal(v.ISR, []int32{1, 2}) || v.HighWatermark != 0 {
		t.Fatalf("during the write: ISR %v high watermark %d, want the committed [1 2] and 0", v.ISR, v.HighWatermark)
	}

	close(w.release)
	select {
	case r := <-waiting:
		if r.Err != nil || r.BaseOffset != 0 {
			t.Fatalf("acks=-1 after the shrink landed: %+v, want offset 0", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("acks=-1 produce not completed after the shrink was committed")
	}
	if s, v := h.State(), h.View(); !slices.Equal(s.ISR, []int32{1}) || s.ZkVersion != 1 || !slices.Equal(v.ISR, []int32{1}) || v.HighWatermark != 5 {
		t.Fatalf("after the commit: state ISR %v version %d, view ISR %v high watermark %d; want [1] 1 [1] 5", s.ISR, s.ZkVersion, v.ISR, v.HighWatermark)
	}
}

// TestIsrWriteLandsAcrossRestart: the actor crashes while its shrink is
// being written; the write then lands. The restarted incarnation, which
// rebuilt its state from the last LeaderAndIsr (same epoch and znode
// version as the proposal), commits it — or its own identical proposal,
// whichever wins the conditional write — and the Handle's state ends at
// ISR [1], version 1, with exactly one write accepted.
func TestIsrWriteLandsAcrossRestart(t *testing.T) {
	_, w, h := newGated(t)
	awaitShrink(t, w)
	h.Crash("during the ISR write")
	for deadline := time.Now().Add(10 * time.Second); !h.View().IsLeader() || h.PID() == nil; {
		if time.Now().After(deadline) {
			t.Fatal("the partition did not restart")
		}
		time.Sleep(time.Millisecond) // the restart has no event on the Handle
	}
	close(w.release)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if s := h.State(); slices.Equal(s.ISR, []int32{1}) && s.ZkVersion == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shrink written across the restart was not committed: state %+v", h.State())
		}
		time.Sleep(time.Millisecond) // the commit is an actor message; the Handle has no event for it
	}
	if v := h.View(); !slices.Equal(v.ISR, []int32{1}) {
		t.Fatalf("view ISR %v after the commit, want [1]", v.ISR)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writes != 1 || w.version != 1 {
		t.Fatalf("%d writes accepted, version %d; want 1, 1", w.writes, w.version)
	}
}
