package partition

import (
	"testing"

	"gregor/actors"
	"gregor/storage"
)

// newStorageManager is a Manager on a real LogManager in a temporary
// directory, for this package's own tests; wrap (nil: none) wraps the
// store. The cleanup closes the manager, the actor system and the logs;
// a test's own cleanups registered later run first.
func newStorageManager(t *testing.T, cfg ManagerConfig, wrap func(StorageStore) LogStore) *Manager {
	t.Helper()
	lm, err := storage.NewLogManager(storage.LogManagerConfig{Dirs: []string{t.TempDir()}, Defaults: storage.DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.System = actors.NewSystem(nil)
	cfg.Store = StorageStore{M: lm}
	if wrap != nil {
		cfg.Store = wrap(StorageStore{M: lm})
	}
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		cfg.System.Shutdown()
		if err := lm.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// leadT0 makes broker 1 the leader of t-0 with ISR = replicas = isr and
// returns its handle.
func leadT0(t *testing.T, m *Manager, isr ...int32) *Handle {
	t.Helper()
	tp := TopicPartition{Topic: "t", Partition: 0}
	st := LeaderAndIsr{TopicPartition: tp, Leader: 1, ISR: isr, Replicas: isr, MinInsyncReplicas: 1, Config: storage.DefaultLogConfig()}
	if errs := m.ApplyLeaderAndIsr([]LeaderAndIsr{st}); len(errs) != 0 {
		t.Fatal(errs)
	}
	h, _ := m.Get(tp)
	return h
}

// proposedExpand is a core leading with ISR [1 2] of replicas [1 2 3]
// whose follower 3 caught up: its expansion to [1 2 3] is proposed.
func proposedExpand(t *testing.T) (*coreEnv, IsrProposal) {
	t.Helper()
	e := newCoreEnv(t, []int32{1, 2}, 1)
	e.fetch(2, 10)
	eff := e.fetch(3, 10)
	if eff.Propose == nil {
		t.Fatal("no expansion proposed")
	}
	return e, *eff.Propose
}
