package partition

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
)

// View is an immutable snapshot of a partition as the read path sees it.
// A new View is published after every change (append, role change,
// restart, stop); readers load it with one atomic pointer read.
type View struct {
	// Log is the partition's log, nil while the actor is (re)starting,
	// stopped or offline.
	Log            Log
	HighWatermark  int64
	LogEndOffset   int64
	LogStartOffset int64
	// LastStableOffset is where read_committed consumers stop:
	// HighWatermark, or below it the first offset of the earliest
	// transaction still open (Core.LastStableOffset).
	LastStableOffset int64
	LeaderEpoch      int32
	Role             Role
	// ISR is the in-sync replica set this replica holds (the leader's
	// includes its own ISR changes); shared, do not modify.
	ISR []int32
	// Followers is the leader's state of each other assigned replica, in
	// assignment order, as of this View (nil unless leader): what the
	// KIP-392 replica selector picks a consumer's read replica from.
	// Shared, do not modify.
	Followers []FollowerView
	// Err is the error to answer for this partition instead of serving it:
	// nil when serving; NOT_LEADER_OR_FOLLOWER while starting, restarting or
	// stopped; KAFKA_STORAGE_ERROR when offline (the supervisor gave up).
	Err *kerr.Error
}

// FollowerView is a snapshot of the leader's FollowerState of one
// follower replica.
type FollowerView struct {
	ID int32 // broker.id
	// LogEndOffset is the follower's last fetch offset; -1 until its
	// first fetch in this leader epoch.
	LogEndOffset int64
	// LastCaughtUp is when it last had every record the leader had
	// (zero: never in this leader epoch).
	LastCaughtUp time.Time
}

// IsLeader reports whether the replica serves as leader right now.
func (v *View) IsLeader() bool { return v.Err == nil && v.Role == RoleLeader && v.Log != nil }

// Handle is the concurrent-safe face of one hosted partition. It outlives
// actor restarts (the actor publishes into it) so connection goroutines
// keep one pointer: they read the View without an actor round trip, send
// Produce to the actor, and register long-poll waiters.
//
// Waiters live in a mutex-protected list in the Handle rather than in the
// actor: registering costs a lock instead of an actor hop (~3 µs when the
// mailbox is idle, plus queueing behind appends), a waiter registered
// while the actor restarts is not lost, and the publisher checks the
// condition under the same lock, so a wake-up cannot be missed between
// "read view" and "register".
type Handle struct {
	tp   TopicPartition
	view atomic.Pointer[View]
	pid  atomic.Pointer[actor.PID]
	// gone is closed when the current actor incarnation has stopped for
	// good (its name is free again); replaced at every spawn.
	gone atomic.Pointer[chan struct{}]
	root *actor.RootContext

	mu      sync.Mutex
	waiters map[uint64]waiter
	nextID  uint64

	// state is the last LeaderAndIsr applied; starts counts actor
	// incarnations. Both are read by the actor on (re)start.
	stateMu sync.Mutex
	state   LeaderAndIsr
	starts  int
	// proposal is the ISR change the actor has pending (nil: none), for
	// the next incarnation to resume (Core.Resume); under stateMu.
	proposal *IsrProposal

	// isrSeq numbers ISR proposals across incarnations (Core.nextSeq).
	isrSeq atomic.Uint64

	// fetches are the follower fetches sent to an actor and not answered
	// yet (see followerFetch).
	fetchMu sync.Mutex
	fetches map[*followerFetch]struct{}
}

type waiter struct {
	after  int64
	leo    bool // wait for the log end offset (follower fetch), not the high watermark
	stable bool // wait for the last stable offset (read_committed fetch)
	wake   chan<- struct{}
}

func (w waiter) satisfied(v *View) bool {
	if v.Err != nil {
		return true
	}
	switch {
	case w.leo:
		return v.LogEndOffset > w.after
	case w.stable:
		return v.LastStableOffset > w.after
	}
	return v.HighWatermark > w.after
}

func newHandle(tp TopicPartition, root *actor.RootContext) *Handle {
	h := &Handle{tp: tp, root: root, waiters: make(map[uint64]waiter), fetches: make(map[*followerFetch]struct{})}
	h.view.Store(&View{Err: kerr.NotLeaderForPartition, LeaderEpoch: -1})
	return h
}

// TopicPartition is the partition this handle serves.
func (h *Handle) TopicPartition() TopicPartition { return h.tp }

// View returns the current snapshot (never nil).
func (h *Handle) View() *View { return h.view.Load() }

// PID is the partition actor's PID, nil when no actor runs.
func (h *Handle) PID() *actor.PID { return h.pid.Load() }

// Produce hands one validated batch to the partition actor. The result
// arrives on p.Reply, which must have room for one value (the actor never
// blocks on it). When no actor runs the reply is sent at once.
func (h *Handle) Produce(p *Produce) {
	p.released = make(chan struct{})
	pid := h.pid.Load()
	if v := h.view.Load(); pid == nil || v.Err == kerr.KafkaStorageError {
		err := v.Err
		if err == nil {
			err = kerr.NotLeaderForPartition
		}
		p.Reply <- ProduceResult{Err: err, BaseOffset: -1, LogAppendTime: -1, LogStartOffset: -1}
		return
	}
	h.root.Send(pid, p)
}

// Crash makes the partition actor panic with reason (fault injection).
func (h *Handle) Crash(reason string) {
	if pid := h.pid.Load(); pid != nil {
		h.root.Send(pid, &Crash{Reason: reason})
	}
}

// WaitForData registers wake to be signalled (non-blocking send, so give
// it a buffer of 1) when the high watermark passes afterOffset, or when the
// partition stops serving (role change, restart, offline) so the waiter
// re-reads and sees the error. If that is already true it is signalled at
// once. The returned cancel removes the registration; call it when done
// waiting (idempotent).
func (h *Handle) WaitForData(afterOffset int64, wake chan<- struct{}) (cancel func()) {
	return h.wait(waiter{after: afterOffset, wake: wake})
}

// WaitForLogEnd is WaitForData for a follower's Fetch on the leader: it
// wakes when the log end offset passes afterOffset (followers read up to
// the log end offset, not the high watermark).
func (h *Handle) WaitForLogEnd(afterOffset int64, wake chan<- struct{}) (cancel func()) {
	return h.wait(waiter{after: afterOffset, leo: true, wake: wake})
}

// WaitForStable is WaitForData for a read_committed Fetch: it wakes when
// the last stable offset passes afterOffset.
func (h *Handle) WaitForStable(afterOffset int64, wake chan<- struct{}) (cancel func()) {
	return h.wait(waiter{after: afterOffset, stable: true, wake: wake})
}

func (h *Handle) wait(w waiter) (cancel func()) {
	h.mu.Lock()
	if w.satisfied(h.view.Load()) {
		h.mu.Unlock()
		signal(w.wake)
		return func() {}
	}
	id := h.nextID
	h.nextID++
	h.waiters[id] = w
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.waiters, id)
		h.mu.Unlock()
	}
}

// Waiters is the number of registered long-poll waiters (for tests and metrics).
func (h *Handle) Waiters() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.waiters)
}

func signal(wake chan<- struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}

// publish stores v and wakes the waiters it satisfies.
func (h *Handle) publish(v *View) {
	h.mu.Lock()
	h.view.Store(v)
	for id, w := range h.waiters {
		if w.satisfied(v) {
			signal(w.wake)
			delete(h.waiters, id)
		}
	}
	h.mu.Unlock()
}

// setUnavailable publishes a view that answers err, keeping the last
// offsets (so HighWatermarks still reports them for the checkpoint).
func (h *Handle) setUnavailable(err *kerr.Error) {
	old := h.view.Load()
	v := *old
	v.Log = nil
	v.Err = err
	h.publish(&v)
}

// State is the last LeaderAndIsr applied to the partition (assigned
// replicas, min.insync.replicas…), for metrics such as under-replicated
// and under-min-ISR partitions.
func (h *Handle) State() LeaderAndIsr {
	h.stateMu.Lock()
	defer h.stateMu.Unlock()
	return h.state
}

func (h *Handle) setState(s LeaderAndIsr) {
	h.stateMu.Lock()
	h.state = s
	h.stateMu.Unlock()
}

func (h *Handle) nextStart() (LeaderAndIsr, *IsrProposal, int) {
	h.stateMu.Lock()
	defer h.stateMu.Unlock()
	h.starts++
	return h.state, h.proposal, h.starts
}

func (h *Handle) saveProposal(p *IsrProposal) {
	h.stateMu.Lock()
	h.proposal = p
	h.stateMu.Unlock()
}
