package partition

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
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
	lm, err := storage.NewLogManager(storage.LogManagerConfig{Dirs: []string{t.TempDir()}, Defaults: storage.DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	gl := gatedLog{armed: new(atomic.Bool), entered: make(chan struct{}), release: make(chan struct{})}
	sys := actors.NewSystem(nil)
	m, err := NewManager(ManagerConfig{System: sys, Store: gatedStore{StorageStore: StorageStore{M: lm}, log: gl}, BrokerID: 1})
	if err != nil {
		t.Fatal(err)
	}
	released := false
	t.Cleanup(func() {
		if !released {
			close(gl.release)
		}
		m.Close()
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
	h, _ := m.Get(tp)
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
	stopped := sys.Root.StopFuture(pid)
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
