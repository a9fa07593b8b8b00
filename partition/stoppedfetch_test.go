package partition

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage"
)

// gatedLog blocks SetConfig, once armed, until release is closed: it
// keeps the partition actor busy inside Receive.
type gatedLog struct {
	Log
	armed   *atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (l gatedLog) SetConfig(cfg storage.LogConfig) {
	if l.armed.Load() {
		close(l.entered)
		<-l.release
	}
	l.Log.SetConfig(cfg)
}

type gatedStore struct {
	StorageStore
	log gatedLog
}

func (s gatedStore) GetOrCreate(tp TopicPartition, cfg storage.LogConfig) (Log, error) {
	l, err := s.StorageStore.GetOrCreate(tp, cfg)
	if err != nil {
		return nil, err
	}
	g := s.log
	g.Log = l
	return g, nil
}

// A follower fetch queued to a partition actor that then stops (the stop,
// a system message, overtakes it; protoactor drops the rest of the
// mailbox) is answered NOT_LEADER_OR_FOLLOWER when the actor has stopped,
// so the Fetch handler does not wait out ReplicationAskTimeout.
func TestFollowerFetchQueuedToAStoppingActorIsAnswered(t *testing.T) {
	gl := gatedLog{armed: new(atomic.Bool), entered: make(chan struct{}), release: make(chan struct{})}
	m := newStorageManager(t, ManagerConfig{BrokerID: 1}, func(s StorageStore) LogStore { return gatedStore{StorageStore: s, log: gl} })
	released := false
	t.Cleanup(func() {
		if !released {
			close(gl.release)
		}
	})
	h := leadT0(t, m, 1, 2)
	pid := h.PID()
	gl.armed.Store(true)
	h.root.Send(pid, &setConfig{cfg: storage.DefaultLogConfig()})
	<-gl.entered // the actor is busy
	answer := make(chan *kerr.Error, 1)
	h.RecordFollowerFetch(2, 0, func(err *kerr.Error) { answer <- err })
	// Stop it as StopReplicas does (not an outage), then let it go on.
	m.mu.Lock()
	delete(m.incarnations, pid)
	m.mu.Unlock()
	stopped := h.root.StopFuture(pid)
	close(gl.release)
	released = true
	if err := stopped.Wait(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-answer:
		if err != kerr.NotLeaderForPartition {
			t.Fatalf("follower fetch answered %v, want NOT_LEADER_OR_FOLLOWER", err)
		}
	case <-time.After(ReplicationAskTimeout):
		t.Fatal("follower fetch queued to a stopped actor never answered")
	}
	if n := len(h.fetches); n != 0 {
		t.Fatalf("%d follower fetches still tracked", n)
	}
}
