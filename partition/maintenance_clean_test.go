package partition_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gregor/actors"
	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
)

// A cleaner pass runs beside the log-manager's other passes: throttled by
// log.cleaner.io.max.bytes.per.second to take minutes, it does not hold up
// the high watermark checkpoints, and Stop ends it at once (the log
// unchanged) rather than waiting it out.
func TestMaintenanceCleaningDoesNotBlockOtherPasses(t *testing.T) {
	sys := actors.NewSystem(nil)
	defer sys.Shutdown()
	lm, err := storage.NewLogManager(storage.LogManagerConfig{Dirs: []string{t.TempDir()}, Defaults: storage.DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	cfg := storage.DefaultLogConfig()
	cfg.Compact, cfg.DeleteDisabled, cfg.SegmentBytes, cfg.MinCleanableDirtyRatio = true, true, 64<<10, 0.01
	l, err := lm.GetOrCreate(storage.TopicPartition{Topic: "c", Partition: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	val := []byte(strings.Repeat("v", 2000))
	for i := 0; l.Size() < 1<<20; i++ {
		b, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: time.Now().UnixMilli(), PartitionLeaderEpoch: -1},
			[]record.BatchRecord{{Key: []byte(fmt.Sprintf("k%d", i%10)), Value: val}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, storage.AppendOptions{LogAppendTime: -1}); err != nil {
			t.Fatal(err)
		}
	}
	l.SetHighWatermark(l.LogEndOffset())
	size := l.Size()

	cc := storage.DefaultCleanerConfig()
	cc.MaxIOBytesPerSecond = 20 << 10 // ~50 s for the offset map pass alone
	var checkpoints atomic.Int64
	hw := func() map[partition.TopicPartition]int64 { checkpoints.Add(1); return nil }
	mt, err := partition.StartMaintenance(sys, partition.StorageStore{M: lm}, hw, partition.MaintenanceConfig{
		RetentionCheck: time.Hour, FlushCheck: time.Hour, Checkpoint: 5 * time.Millisecond,
		RecoveryPointCheckpoint: time.Hour, LogStartCheckpoint: time.Hour,
		CleanerBackoff: time.Millisecond, Cleaner: cc,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for checkpoints.Load() < 50 {
		if time.Now().After(deadline) {
			mt.Stop()
			t.Fatalf("only %d high watermark checkpoints in 15 s beside a throttled cleaner pass", checkpoints.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() { mt.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop waited out the throttled cleaner pass")
	}
	if l.Size() != size {
		t.Fatalf("log size %d → %d: the aborted pass changed it", size, l.Size())
	}
}
