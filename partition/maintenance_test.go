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
