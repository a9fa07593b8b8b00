package partition

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"
)

// This file is the replica manager's side of offline replicas (Kafka
// KIP-112, ZooKeeper mode): a partition actor that stops for good while
// the partition is still hosted here — its supervisor gave up after too
// many failures, or an operator stopped it (POST /faults "stop") — leaves
// the replica offline. Its Handle answers KAFKA_STORAGE_ERROR, the replica
// stops fetching, and the OfflineReporter tells the controller, which
// moves leadership to another in-sync replica and drops this one from the
// ISR. The replica comes back when the broker restarts, or when a
// LeaderAndIsr for the partition reaches this broker again (ApplyLeaderAndIsr
// respawns a stopped actor); the controller sends none to an offline
// replica until the broker re-registers.

// OfflineReporter is told, once per stopped incarnation, that the replica
// of tp hosted here went offline. It runs on a goroutine of the Manager
// (Close waits for it); it should return promptly (the controller writes
// a notification znode).
type OfflineReporter func(tp TopicPartition)

type reporterBox struct{ f OfflineReporter }

// SetOfflineReporter installs the reporter of offline replicas (the
// controller, replication/controller.Controller.ReportOfflineReplica).
// Replicas that go offline before it is set are only marked offline here.
func (m *Manager) SetOfflineReporter(f OfflineReporter) { m.reporter.Store(&reporterBox{f}) }

// childTerminated runs on the replica-manager actor when a partition actor
// it watches has stopped for good. Stops the Manager asked for
// (StopReplicas, Close) unregistered the incarnation first; any other stop
// takes the replica offline. A restart of the replica-manager actor itself
// stops no partition actor (they are not its protoactor children, see
// Manager), so it brings no Terminated here.
func (m *Manager) childTerminated(who *actor.PID) {
	m.mu.Lock()
	h, ok := m.incarnations[who]
	delete(m.incarnations, who)
	if !ok || m.closed || m.parts[h.tp] != h {
		m.mu.Unlock()
		return
	}
	if h.PID() != nil {
		// Already revived by a LeaderAndIsr (a new incarnation runs).
		m.mu.Unlock()
		return
	}
	m.wg.Add(1) // under mu with !closed: Close's Wait cannot have begun
	m.mu.Unlock()

	h.setUnavailable(kerr.KafkaStorageError)
	m.log.Error("partition actor stopped for good: replica offline, reporting it to the controller",
		zap.String("actor", who.GetId()), zap.Stringer("partition", h.tp))
	// Unfollow waits on the fetcher manager and the reporter on the
	// metadata store: neither may block the replica-manager actor.
	go func() {
		defer m.wg.Done()
		if f := m.fetcherControl(); f != nil {
			f.Unfollow(h.tp)
		}
		if b := m.reporter.Load(); b != nil && b.f != nil {
			b.f(h.tp)
		}
	}()
}
