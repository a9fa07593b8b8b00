package partition_test

import (
	"sync/atomic"
	"testing"
	"time"

	"gregor/actors"
	"gregor/partition"
	"gregor/partition/partitiontest"
)

// panickyStore's retention pass panics while panics > 0.
type panickyStore struct {
	*partitiontest.Store
	panics    atomic.Int32
	retention atomic.Int64 // passes that ran to completion
}

func (s *panickyStore) RetentionPass(now time.Time) (int, error) {
	if s.panics.Add(-1) >= 0 {
		panic("retention pass failed")
	}
	s.retention.Add(1)
	return s.Store.RetentionPass(now)
}

// The log-manager restarts under its BackoffStrategy and never gives up:
// 15 failures in a row (protoactor's default strategy stops an actor after
// 10 within 10 s) and retention still runs afterwards.
func TestMaintenanceRestartsWithoutGivingUp(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{})
	store := &panickyStore{Store: e.store}
	store.panics.Store(15)
	mt, err := partition.StartMaintenance(e.sys, store, e.m.HighWatermarks, partition.MaintenanceConfig{
		RetentionCheck: time.Millisecond, FlushCheck: time.Hour, Checkpoint: time.Hour, CleanerBackoff: time.Hour,
		Backoff: actors.BackoffStrategy{Initial: time.Millisecond, Max: 2 * time.Millisecond},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mt.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for store.retention.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("retention stopped after the failures: %d panics left, %d passes", store.panics.Load(), store.retention.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// retainingStore's retention pass moves the log start of tp to cut (as
// deleting its old segments does) and reports one segment deleted.
type retainingStore struct {
	*partitiontest.Store
	tp  partition.TopicPartition
	cut atomic.Int64
}

func (s *retainingStore) RetentionPass(time.Time) (int, error) {
	c := s.cut.Load()
	l := s.Log(s.tp)
	if c <= 0 || l == nil || l.LogStartOffset() >= c {
		return 0, nil
	}
	if err := l.DeleteRecordsBefore(c); err != nil {
		return 0, err
	}
	return 1, nil
}

// A retention pass that deletes segments moves the partition's published
// log start offset (ListOffsets earliest, Fetch's log_start_offset) at
// once, as Kafka's does, not at the partition's next append.
func TestRetentionPublishesLogStart(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{})
	tp := partition.TopicPartition{Topic: "old", Partition: 0}
	h := e.lead(tp, 0)
	for range 4 {
		if r := produce(t, h, batch(t, 3, nil)); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if v := h.View(); v.LogStartOffset != 0 || v.LogEndOffset != 12 {
		t.Fatalf("before retention: start %d end %d", v.LogStartOffset, v.LogEndOffset)
	}
	store := &retainingStore{Store: e.store, tp: tp}
	mt, err := partition.StartMaintenance(e.sys, store, e.m.HighWatermarks, partition.MaintenanceConfig{
		RetentionCheck: 5 * time.Millisecond, FlushCheck: time.Hour, Checkpoint: time.Hour, CleanerBackoff: time.Hour,
		AfterRetention: e.m.RefreshLogStart,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mt.Stop()
	store.cut.Store(6)
	deadline := time.Now().Add(10 * time.Second)
	for h.View().LogStartOffset != 6 {
		if time.Now().After(deadline) {
			t.Fatalf("log start offset still %d after retention moved the log's to 6", h.View().LogStartOffset)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if v := h.View(); v.LogEndOffset != 12 || v.HighWatermark != 12 {
		t.Fatalf("after retention: end %d hw %d", v.LogEndOffset, v.HighWatermark)
	}
}
