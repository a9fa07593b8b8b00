package partition_test

import (
	"testing"

	"gregor/actors"
	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
)

// A broker restart on the real storage engine: producer state is rebuilt
// from the log (a retried batch is still a duplicate) and the high
// watermark comes back from replication-offset-checkpoint.
func TestRestartOnRealStorageKeepsProducerStateAndHW(t *testing.T) {
	dir := t.TempDir()
	open := func() (*storage.LogManager, *partition.Manager, func()) {
		lm, err := storage.NewLogManager(storage.LogManagerConfig{Dirs: []string{dir}, Defaults: storage.DefaultLogConfig()})
		if err != nil {
			t.Fatal(err)
		}
		sys := actors.NewSystem(nil)
		m, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: partition.StorageStore{M: lm}, BrokerID: 1})
		if err != nil {
			t.Fatal(err)
		}
		return lm, m, func() {
			m.Close()
			sys.Shutdown()
			if err := lm.Close(); err != nil {
				t.Error(err)
			}
		}
	}
	state := []partition.LeaderAndIsr{{TopicPartition: tp0, Leader: 1, LeaderEpoch: 0, ISR: []int32{1}, Config: storage.DefaultLogConfig()}}
	prod := func(seq int32) *record.Producer { return &record.Producer{ID: 9, Epoch: 0, BaseSequence: seq} }

	lm, m, closeAll := open()
	if errs := m.ApplyLeaderAndIsr(state); len(errs) != 0 {
		t.Fatal(errs)
	}
	h, _ := m.Get(tp0)
	produce(t, h, batch(t, 2, prod(0)))
	produce(t, h, batch(t, 3, prod(2)))
	if err := lm.CheckpointHighWatermarks(m.HighWatermarks()); err != nil {
		t.Fatal(err)
	}
	closeAll()

	_, m, closeAll = open()
	defer closeAll()
	if errs := m.ApplyLeaderAndIsr(state); len(errs) != 0 {
		t.Fatal(errs)
	}
	h, _ = m.Get(tp0)
	if v := h.View(); v.LogEndOffset != 5 || v.HighWatermark != 5 {
		t.Fatalf("after restart leo %d hw %d, want 5 and 5", v.LogEndOffset, v.HighWatermark)
	}
	if r := produce(t, h, batch(t, 3, prod(2))); r.Err != nil || r.BaseOffset != 2 {
		t.Fatalf("retry after restart: %+v, want duplicate at offset 2", r)
	}
	if r := produce(t, h, batch(t, 1, prod(5))); r.Err != nil || r.BaseOffset != 5 {
		t.Fatalf("next after restart: %+v, want offset 5", r)
	}
}
