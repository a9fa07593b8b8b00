package partition_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
	"gregor/partition"
)

// reports collects what the Manager's OfflineReporter is told.
func reports(m *partition.Manager) <-chan partition.TopicPartition {
	ch := make(chan partition.TopicPartition, 16)
	m.SetOfflineReporter(func(tp partition.TopicPartition) { ch <- tp })
	return ch
}

func awaitReport(t *testing.T, ch <-chan partition.TopicPartition, want partition.TopicPartition) {
	t.Helper()
	select {
	case tp := <-ch:
		if tp != want {
			t.Fatalf("reported %v offline, want %v", tp, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%v not reported offline", want)
	}
}

func noReport(t *testing.T, ch <-chan partition.TopicPartition) {
	t.Helper()
	select {
	case tp := <-ch:
		t.Fatalf("unexpected offline report of %v", tp)
	case <-time.After(100 * time.Millisecond): // reports are prompt: none came
	}
}

// An operator stop (the fault injector's Stop of the partition actor) is
// an outage: the replica answers KAFKA_STORAGE_ERROR, is reported offline
// once, the neighbours serve on, and a LeaderAndIsr revives it.
func TestOperatorStopTakesReplicaOfflineAndReportsIt(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{})
	ch := reports(e.m)
	h := e.lead(tp0, 0)
	other := e.lead(partition.TopicPartition{Topic: "orders", Partition: 1}, 0)
	produce(t, h, batch(t, 2, nil))

	if err := e.sys.Root.StopFuture(h.PID()).Wait(); err != nil {
		t.Fatal(err)
	}
	awaitReport(t, ch, tp0)
	if v := h.View(); v.Err != kerr.KafkaStorageError {
		t.Fatalf("stopped replica answers %v, want KAFKA_STORAGE_ERROR", v.Err)
	}
	if r := produce(t, h, batch(t, 1, nil)); r.Err != kerr.KafkaStorageError {
		t.Fatalf("produce to the offline replica: %+v", r)
	}
	if r := produce(t, other, batch(t, 1, nil)); r.Err != nil || r.BaseOffset != 0 {
		t.Fatalf("neighbour: %+v", r)
	}
	noReport(t, ch)

	h = e.lead(tp0, 1)
	if r := produce(t, h, batch(t, 1, nil)); r.Err != nil || r.BaseOffset != 2 {
		t.Fatalf("after revival: %+v, want offset 2 (log kept)", r)
	}
}

// The supervisor giving up reports the replica offline, once.
func TestGiveUpReportsReplicaOffline(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{Initial: time.Millisecond, Max: 2 * time.Millisecond, MaxRetries: 2, Window: time.Minute})
	ch := reports(e.m)
	h := e.lead(tp0, 0)
	for i := 0; i < 3; i++ {
		h.Crash("storm")
	}
	awaitReport(t, ch, tp0)
	if v := h.View(); v.Err != kerr.KafkaStorageError {
		t.Fatalf("given-up replica answers %v, want KAFKA_STORAGE_ERROR", v.Err)
	}
	noReport(t, ch)
}

// Stops the controller asks for (StopReplica) and the broker's own
// shutdown are not outages.
func TestStopReplicasAndCloseReportNothing(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{})
	ch := reports(e.m)
	e.lead(tp0, 0)
	e.lead(partition.TopicPartition{Topic: "orders", Partition: 1}, 0)
	if err := e.m.StopReplicas([]partition.TopicPartition{tp0}, false); err != nil {
		t.Fatal(err)
	}
	e.lead(tp0, 1) // same name, new incarnation
	e.m.Close()
	noReport(t, ch)
}
