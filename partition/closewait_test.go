package partition

import (
	"testing"
	"time"

	"gregor/actors"
	"gregor/storage"
)

// blockedIsr is an IsrWriter stuck in a ZooKeeper call (an outage):
// every write blocks until release is closed, then fails.
type blockedIsr struct {
	started chan struct{}
	release chan struct{}
}

func (w *blockedIsr) AlterIsr(TopicPartition, int32, []int32, int32) (int32, error) {
	select {
	case w.started <- struct{}{}:
	default:
	}
	<-w.release
	return 0, storage.ErrLogClosed
}

// Close does not wait for an ISR write stuck in the metadata store longer
// than closeWait: the store is closed after the replica manager, so
// waiting for it would hang the shutdown for the whole outage.
func TestCloseDoesNotWaitForAStuckIsrWrite(t *testing.T) {
	lm, err := storage.NewLogManager(storage.LogManagerConfig{Dirs: []string{t.TempDir()}, Defaults: storage.DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	sys := actors.NewSystem(nil)
	w := &blockedIsr{started: make(chan struct{}, 1), release: make(chan struct{})}
	m, err := NewManager(ManagerConfig{System: sys, Store: StorageStore{M: lm}, BrokerID: 1, IsrWriter: w, ReplicaLagTimeMax: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m.closeWait = 50 * time.Millisecond
	t.Cleanup(func() {
		close(w.release) // the store failing the write, as closing it does
		m.isrWrites.Wait()
		sys.Shutdown()
		if err := lm.Close(); err != nil {
			t.Error(err)
		}
	})
	tp := TopicPartition{Topic: "t", Partition: 0}
	st := LeaderAndIsr{TopicPartition: tp, Leader: 1, ISR: []int32{1, 2}, Replicas: []int32{1, 2}, MinInsyncReplicas: 1, Config: storage.DefaultLogConfig()}
	if errs := m.ApplyLeaderAndIsr([]LeaderAndIsr{st}); len(errs) != 0 {
		t.Fatal(errs)
	}
	select {
	case <-w.started: // follower 2 never fetches: the shrink is being written
	case <-time.After(ReplicationAskTimeout):
		t.Fatal("no ISR write started")
	}
	closed := make(chan struct{})
	go func() {
		m.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(ReplicationAskTimeout):
		t.Fatal("Close waits for an ISR write stuck in the metadata store")
	}
}
