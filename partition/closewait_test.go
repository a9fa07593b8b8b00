package partition

import (
	"testing"
	"time"

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
	w := &blockedIsr{started: make(chan struct{}, 1), release: make(chan struct{})}
	m := newStorageManager(t, ManagerConfig{BrokerID: 1, IsrWriter: w, ReplicaLagTimeMax: 100 * time.Millisecond}, nil)
	m.closeWait = 50 * time.Millisecond
	t.Cleanup(func() {
		close(w.release) // the store failing the write, as closing it does
		m.isrWrites.Wait()
	})
	leadT0(t, m, 1, 2)
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
