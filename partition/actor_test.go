package partition_test

import (
	"io"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
	"gregor/partition"
	"gregor/partition/partitiontest"
	"gregor/storage"
	"gregor/storage/record"
)

type env struct {
	t     *testing.T
	sys   *actor.ActorSystem
	store *partitiontest.Store
	m     *partition.Manager
}

func newEnv(t *testing.T, backoff actors.BackoffStrategy) *env {
	t.Helper()
	sys := actors.NewSystem(nil)
	store := partitiontest.NewStore(t.TempDir())
	m, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: store, BrokerID: 1, Backoff: backoff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		sys.Shutdown()
		store.Close()
	})
	return &env{t: t, sys: sys, store: store, m: m}
}

func (e *env) lead(tp partition.TopicPartition, epoch int32) *partition.Handle {
	e.t.Helper()
	cfg := storage.DefaultLogConfig()
	errs := e.m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp, Leader: 1, LeaderEpoch: epoch, ISR: []int32{1}, Replicas: []int32{1}, Config: cfg}})
	if len(errs) != 0 {
		e.t.Fatalf("ApplyLeaderAndIsr: %v", errs)
	}
	h, ok := e.m.Get(tp)
	if !ok {
		e.t.Fatal("partition not hosted")
	}
	return h
}

func batch(t *testing.T, n int, prod *record.Producer) []byte {
	t.Helper()
	recs := make([]record.BatchRecord, n)
	for i := range recs {
		recs[i] = record.BatchRecord{Key: []byte{byte('a' + i)}, Value: []byte("value"), TimestampDelta: int64(i)}
	}
	b, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: 1_700_000_000_000, PartitionLeaderEpoch: -1, Producer: prod}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func produce(t *testing.T, h *partition.Handle, b []byte) partition.ProduceResult {
	t.Helper()
	hdr, _, err := record.Validate(b)
	if err != nil {
		t.Fatal(err)
	}
	reply := make(chan partition.ProduceResult, 1)
	h.Produce(&partition.Produce{Batch: b, Header: hdr, Acks: -1, Reply: reply})
	select {
	case r := <-reply:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no produce reply")
	}
	return partition.ProduceResult{}
}

// readAll materialises Read(from, …, hw) and returns the batch headers.
func readAll(t *testing.T, h *partition.Handle, from int64) []record.Header {
	t.Helper()
	v := h.View()
	fd, err := v.Log.Read(from, 1<<20, v.HighWatermark)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Release()
	var out []record.Header
	for _, r := range fd.Regions {
		buf := make([]byte, r.Len)
		if _, err := r.File.ReadAt(buf, r.Pos); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		for len(buf) > 0 {
			hdr, b, err := record.Validate(buf)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, hdr)
			buf = buf[len(b):]
		}
	}
	return out
}

var tp0 = partition.TopicPartition{Topic: "orders", Partition: 0}

func TestProduceAssignsOffsetsAndMovesHW(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{})
	h := e.lead(tp0, 4)
	if pid := h.PID(); pid == nil || pid.Id != "replica-manager/orders-0" {
		t.Fatalf("actor pid %v, want replica-manager/orders-0", pid)
	}
	r1 := produce(t, h, batch(t, 3, nil))
	r2 := produce(t, h, batch(t, 2, nil))
	if r1.Err != nil || r1.BaseOffset != 0 || r2.Err != nil || r2.BaseOffset != 3 {
		t.Fatalf("results %+v %+v, want base offsets 0 and 3", r1, r2)
	}
	v := h.View()
	if v.HighWatermark != 5 || v.LogEndOffset != 5 || !v.IsLeader() || v.LeaderEpoch != 4 {
		t.Fatalf("view %+v, want hw=leo=5 leader epoch 4", v)
	}
	hs := readAll(t, h, 0)
	if len(hs) != 2 || hs[0].BaseOffset != 0 || hs[1].BaseOffset != 3 || hs[1].PartitionLeaderEpoch != 4 {
		t.Fatalf("read back %+v", hs)
	}
}

func TestIdempotentDuplicatesAndGapsSurviveCrash(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{Initial: time.Millisecond, Max: 5 * time.Millisecond})
	h := e.lead(tp0, 0)
	p := func(seq int32) *record.Producer { return &record.Producer{ID: 42, Epoch: 0, BaseSequence: seq} }
	if r := produce(t, h, batch(t, 2, p(0))); r.Err != nil || r.BaseOffset != 0 {
		t.Fatalf("first: %+v", r)
	}
	if r := produce(t, h, batch(t, 2, p(2))); r.Err != nil || r.BaseOffset != 2 {
		t.Fatalf("second: %+v", r)
	}
	if r := produce(t, h, batch(t, 2, p(0))); r.Err != nil || r.BaseOffset != 0 {
		t.Fatalf("duplicate: %+v, want original offset 0", r)
	}
	if r := produce(t, h, batch(t, 1, p(7))); r.Err != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("gap: %+v, want OUT_OF_ORDER_SEQUENCE_NUMBER", r)
	}
	if leo := h.View().LogEndOffset; leo != 4 {
		t.Fatalf("log end offset %d, want 4 (duplicate and gap not appended)", leo)
	}

	oldPID := h.PID()
	h.Crash("test")
	// Produce right away: it queues behind the crash and runs after the
	// restart rebuilt producer state from the log.
	if r := produce(t, h, batch(t, 2, p(2))); r.Err != nil || r.BaseOffset != 2 {
		t.Fatalf("duplicate after crash: %+v, want original offset 2", r)
	}
	if r := produce(t, h, batch(t, 1, p(4))); r.Err != nil || r.BaseOffset != 4 {
		t.Fatalf("next after crash: %+v, want offset 4", r)
	}
	if !h.PID().Equal(oldPID) {
		t.Fatalf("pid changed across restart: %v → %v", oldPID, h.PID())
	}
	if got := len(readAll(t, h, 0)); got != 3 {
		t.Fatalf("%d batches in the log, want 3", got)
	}
}

func TestLongPollWokenByProduce(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{})
	h := e.lead(tp0, 0)
	produce(t, h, batch(t, 1, nil))
	wake := make(chan struct{}, 1)
	cancel := h.WaitForData(1, wake) // hw is 1: nothing past offset 1 yet
	defer cancel()
	select {
	case <-wake:
		t.Fatal("woken before any new data")
	default:
	}
	if n := h.Waiters(); n != 1 {
		t.Fatalf("%d waiters, want 1", n)
	}
	produce(t, h, batch(t, 1, nil))
	select {
	case <-wake:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not woken by produce")
	}
	if n := h.Waiters(); n != 0 {
		t.Fatalf("%d waiters left, want 0", n)
	}
	// Already satisfied: signalled at once.
	wake2 := make(chan struct{}, 1)
	h.WaitForData(0, wake2)
	select {
	case <-wake2:
	default:
		t.Fatal("satisfied wait not signalled at once")
	}
}

func TestRepeatedCrashesTakePartitionOffline(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{Initial: time.Millisecond, Max: 2 * time.Millisecond, MaxRetries: 2, Window: time.Minute})
	h := e.lead(tp0, 0)
	other := e.lead(partition.TopicPartition{Topic: "orders", Partition: 1}, 0)
	for i := 0; i < 3; i++ {
		h.Crash("storm")
	}
	deadline := time.Now().Add(5 * time.Second)
	for h.View().Err != kerr.KafkaStorageError {
		if time.Now().After(deadline) {
			t.Fatalf("partition not offline: %+v", h.View())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if r := produce(t, h, batch(t, 1, nil)); r.Err != kerr.KafkaStorageError {
		t.Fatalf("produce to offline partition: %+v", r)
	}
	// The broker lives: the neighbour still serves.
	if r := produce(t, other, batch(t, 1, nil)); r.Err != nil || r.BaseOffset != 0 {
		t.Fatalf("neighbour: %+v", r)
	}
	// A new LeaderAndIsr brings it back (Reopen).
	h = e.lead(tp0, 1)
	if r := produce(t, h, batch(t, 1, nil)); r.Err != nil || r.BaseOffset != 0 {
		t.Fatalf("after revival: %+v", r)
	}
}

func TestStorageErrorCrashesAndRecovers(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{Initial: time.Millisecond, Max: 2 * time.Millisecond})
	h := e.lead(tp0, 0)
	produce(t, h, batch(t, 1, nil))
	e.store.Log(tp0).FailAppends.Store(true)
	if r := produce(t, h, batch(t, 1, nil)); r.Err != kerr.KafkaStorageError {
		t.Fatalf("failing append: %+v, want KAFKA_STORAGE_ERROR", r)
	}
	// The actor crashed and reopened the log (a fresh Log without the fault).
	if r := produce(t, h, batch(t, 1, nil)); r.Err != nil || r.BaseOffset != 1 {
		t.Fatalf("after recovery: %+v, want offset 1", r)
	}
}

func TestStaleLeaderEpochAndStopReplicas(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{})
	e.lead(tp0, 5)
	errs := e.m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp0, Leader: 1, LeaderEpoch: 3, ISR: []int32{1}, Config: storage.DefaultLogConfig()}})
	if errs[tp0] != kerr.FencedLeaderEpoch {
		t.Fatalf("stale epoch: %v", errs)
	}
	h, _ := e.m.Get(tp0)
	produce(t, h, batch(t, 2, nil))
	if hw := e.m.HighWatermarks()[tp0]; hw != 2 {
		t.Fatalf("HighWatermarks %d, want 2", hw)
	}
	if err := e.m.StopReplicas([]partition.TopicPartition{tp0}, true); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.m.Get(tp0); ok {
		t.Fatal("still hosted after StopReplicas")
	}
	if v := h.View(); v.Err != kerr.NotLeaderForPartition || v.Log != nil {
		t.Fatalf("stopped view %+v", v)
	}
	if r := produce(t, h, batch(t, 1, nil)); r.Err != kerr.NotLeaderForPartition {
		t.Fatalf("produce after stop: %+v", r)
	}
	// Deleted: a new leadership starts an empty log.
	h = e.lead(tp0, 6)
	if r := produce(t, h, batch(t, 1, nil)); r.BaseOffset != 0 {
		t.Fatalf("after delete: %+v, want offset 0", r)
	}
}

func TestMaintenanceChecksPointsHighWatermarks(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{})
	h := e.lead(tp0, 0)
	produce(t, h, batch(t, 3, nil))
	mt, err := partition.StartMaintenance(e.sys, e.store, e.m.HighWatermarks,
		partition.MaintenanceConfig{RetentionCheck: time.Millisecond, FlushCheck: time.Millisecond, Checkpoint: time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.store.Passes.Load() < 6 {
		if time.Now().After(deadline) {
			t.Fatal("maintenance passes did not run")
		}
		time.Sleep(time.Millisecond)
	}
	mt.Stop()
	if hw := e.store.HighWatermarks()[tp0]; hw != 3 {
		t.Fatalf("checkpointed hw %d, want 3", hw)
	}
}

func TestProducerIDsNeverReused(t *testing.T) {
	dir := t.TempDir()
	a, err := partition.OpenProducerIDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for i := 0; i < 3; i++ {
		id, err := a.Next()
		if err != nil || seen[id] {
			t.Fatalf("id %d err %v", id, err)
		}
		seen[id] = true
	}
	b, err := partition.OpenProducerIDs(dir) // "restart"
	if err != nil {
		t.Fatal(err)
	}
	id, err := b.Next()
	if err != nil || id != partition.ProducerIDBlockSize {
		t.Fatalf("after restart id %d err %v, want %d", id, err, partition.ProducerIDBlockSize)
	}
}
