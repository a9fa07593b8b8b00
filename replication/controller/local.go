package controller

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"gregor/partition"
)

// This file is the controller's channel to its own broker: the
// LeaderAndIsr, StopReplica and topic config changes the active
// controller sends this broker go to the replica manager through one
// FIFO worker goroutine (localQueue) instead of running inside the
// controller actor's Receive, where the replica manager's waits on
// partition actors (up to 10 s each) would hold every other controller
// event. It is the in-process twin of a peer's controller channel
// (channel.go): requests are applied in the order they were sent, and
// what the broker answers comes back to the actor as a message.

// localQueue is an unbounded FIFO of jobs run one at a time on its own
// goroutine. The Controller owns it: Start starts it before spawning the
// actor, Close stops it after the actor stopped and waits for the
// goroutine. Jobs queued when it stops are dropped (the broker is
// shutting down; nothing waits for them but callers that also watch
// Controller.stop).
type localQueue struct {
	mu       sync.Mutex
	jobs     []func()
	wake     chan struct{} // capacity 1: a job was queued or the queue closed
	closed   bool
	running  bool
	queued   uint64        // jobs ever queued; a job's sequence number is queued after it
	finished uint64        // jobs run to completion (or dropped at close)
	progress chan struct{} // closed and replaced each time finished grows
	exited   chan struct{} // closed when the goroutine returns
}

func newLocalQueue() *localQueue {
	return &localQueue{wake: make(chan struct{}, 1), progress: make(chan struct{}), exited: make(chan struct{})}
}

// start runs the worker goroutine (once).
func (q *localQueue) start() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running || q.closed {
		return
	}
	q.running = true
	go q.run()
}

func (q *localQueue) run() {
	defer close(q.exited)
	for {
		q.mu.Lock()
		for len(q.jobs) == 0 && !q.closed {
			q.mu.Unlock()
			<-q.wake
			q.mu.Lock()
		}
		if q.closed {
			q.finished = q.queued // dropped: waiters see them done
			close(q.progress)
			q.progress = make(chan struct{})
			q.jobs = nil
			q.mu.Unlock()
			return
		}
		job := q.jobs[0]
		q.jobs[0] = nil
		q.jobs = q.jobs[1:]
		q.mu.Unlock()
		job()
		q.mu.Lock()
		q.finished++
		close(q.progress)
		q.progress = make(chan struct{})
		q.mu.Unlock()
	}
}

// enqueue queues job and returns its sequence number (0 = dropped: the
// queue is closed).
func (q *localQueue) enqueue(job func()) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0
	}
	q.jobs = append(q.jobs, job)
	q.queued++
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return q.queued
}

// last is the sequence number of the last job queued (0: none yet).
func (q *localQueue) last() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// wait returns true once every job up to seq has run, false when stop
// closes or timeout passes first.
func (q *localQueue) wait(seq uint64, stop <-chan struct{}, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		q.mu.Lock()
		done, progress := q.finished >= seq, q.progress
		q.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-progress:
		case <-stop:
			return false
		case <-t.C:
			return false
		}
	}
}

// close stops the worker after its current job and waits for it.
func (q *localQueue) close() {
	q.mu.Lock()
	q.closed = true
	running := q.running
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	if running {
		<-q.exited
	}
}

// errClosing: the controller closed before this broker applied a request.
var errClosing = errors.New("controller: closing")

// localTag identifies the controller that sent a local request: a result
// that comes back after the actor restarted (a new incarnation re-read
// ZooKeeper and resent everything) or after the epoch changed (resigned,
// re-elected) is stale and dropped.
type localTag struct {
	incarnation int
	epoch       int32
}

func (c *Controller) localTag() localTag { return localTag{incarnation: c.incarnation, epoch: c.epoch} }

// applyLocalLeaderAndIsr queues states for this broker's replica manager;
// its per-partition failures come back to the actor (onLocalApplied),
// which marks the partitions that failed to start (reported offline).
func (c *Controller) applyLocalLeaderAndIsr(states []partition.LeaderAndIsr) {
	c.zk.NoteControllerEpoch(c.epoch)
	noted := map[string]bool{}
	for _, s := range states {
		if t := c.topics[s.Topic]; t != nil && !noted[s.Topic] {
			noted[s.Topic] = true
			c.noteTopicConfig(s.Topic, t.overrides)
		}
	}
	tag := c.localTag()
	c.local.enqueue(func() {
		errs := c.rm.ApplyLeaderAndIsr(states)
		c.tell(func() { c.onLocalApplied(tag, states, errs) })
	})
}

// onLocalApplied records, on the actor, which of states this broker's
// replica manager failed to apply (partState.failed), and publishes the
// metadata again when a mark changed (buildSnapshot shows a failed local
// leader as no leader and the replica offline). A stale result is dropped.
func (c *Controller) onLocalApplied(tag localTag, states []partition.LeaderAndIsr, errs map[partition.TopicPartition]error) {
	if tag != c.localTag() {
		return
	}
	changed := false
	for _, s := range states {
		t := c.topics[s.Topic]
		if t == nil || t.state[s.Partition] == nil {
			continue
		}
		err := errs[s.TopicPartition]
		if st := t.state[s.Partition]; st.failed != (err != nil) {
			st.failed = err != nil
			changed = true
		}
		if err != nil {
			c.log.Error("LeaderAndIsr failed", zap.Stringer("partition", s.TopicPartition), zap.Error(err))
		}
	}
	if changed {
		c.publish()
	}
}

// stopLocalReplicas queues a StopReplica of tps for this broker's replica
// manager, after every LeaderAndIsr already queued; a failure is logged
// with what.
func (c *Controller) stopLocalReplicas(tps []partition.TopicPartition, deleteLogs bool, what string) {
	c.local.enqueue(func() {
		if err := c.rm.StopReplicas(tps, deleteLogs); err != nil {
			c.log.Warn(what, zap.Any("partitions", tps), zap.Error(err))
		}
	})
}

// stopLocalReplicasWait is stopLocalReplicas for an event that needs the
// outcome (topic deletion keeps its marker when the local stop failed):
// the wait for the queued requests before it and the stop, at most
// CallTimeout, is an effect (offActor), so the actor goes on answering
// while this broker's replica manager works.
func (c *Controller) stopLocalReplicasWait(tps []partition.TopicPartition, deleteLogs bool) error {
	var err error
	done := make(chan struct{})
	if c.local.enqueue(func() { err = c.rm.StopReplicas(tps, deleteLogs); close(done) }) == 0 {
		return errClosing
	}
	var out error
	c.offActor(func() {
		t := time.NewTimer(CallTimeout)
		defer t.Stop()
		select {
		case <-done:
			out = err
		case <-c.stop:
			out = errClosing
		case <-t.C:
			out = fmt.Errorf("the replica manager did not stop the replicas within %v", CallTimeout)
		}
	})
	return out
}

// waitLocal waits, on the caller's goroutine (never the actor's), until
// this broker applied every local request up to seq (localQueue.last
// read on the actor), at most CallTimeout (false: timed out or closing;
// the requests still run).
func (c *Controller) waitLocal(seq uint64) bool {
	if seq == 0 {
		return true
	}
	return c.local.wait(seq, c.stop, CallTimeout)
}
