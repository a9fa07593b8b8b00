package controller

import (
	"context"
	"errors"
	"runtime/debug"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/replication/metastore"
)

// This file is how a controller event waits for I/O without the actor
// waiting. Kafka's controller handles one event at a time on its event
// thread and blocks that thread on every ZooKeeper call; Gregor keeps the
// one-event-at-a-time order but not the blocking:
//
//   - Every event and call (cluster.go's event, actor.go's callMsg) goes
//     into c.queue, an ordered queue the actor owns that survives a restart
//     of the actor. The head runs as an eventRun: the event's code, written
//     as straight-line Go, on a goroutine of its own that the Controller
//     owns (counted in c.wg).
//   - The event's code touches controller state only while the actor has
//     handed it the turn: the actor starts or resumes the run, then waits
//     for it to yield, exactly as it would wait for a function it called
//     (no I/O happens in that time). Each metastore call of an event
//     (through c.meta, eventStore) and each wait on another component
//     (offActor) is an effect: the run yields the turn, performs the call
//     off the actor, and sends the result back as a resumeMsg tagged with
//     the controller round; the actor hands the turn back on that message
//     and the event continues from where it was. Meanwhile the actor keeps
//     answering: it queues new events and calls behind the running one,
//     answers queries (EventQueueSize) and handles restarts.
//   - The next queued item starts only when the running one finished, so
//     Kafka's semantics hold: events never interleave.
//   - A new incarnation of the actor (a restart after a panic, or a
//     respawn after giving up) starts a new round. A run from an older
//     round is abandoned: when its effect returns, its result is dropped
//     (the actor answers its resumeMsg with "abandon", or the run sees its
//     incarnation's scope or Close's stop channel end first), the run
//     unwinds without touching controller state, and a caller waiting for
//     it gets NOT_CONTROLLER (retriable). The new incarnation re-reads
//     everything from ZooKeeper, and its bumped controller epoch fences any
//     partition state write of the old round still in flight; an unfenced
//     one (a topic's znodes) lands as another broker's write would, and the
//     new incarnation's watches see it.
//
// Event code therefore makes every wait an effect (a wait that is not
// would hold the actor, which waits for the turn), must not defer
// anything that touches controller state (an abandoned run unwinds on its
// own goroutine, outside the turn) and must not recover panics (the
// unwinding is a panic).

// eventRun is one queued item being run: the goroutine running it and the
// two channels of the turn handover.
type eventRun struct {
	round  uint64         // c.round when it started
	resume chan bool      // actor → run (capacity 1): true = your turn, false = abandoned
	yield  chan yieldNote // run → actor (capacity 1): the run gave the turn back
	gone   chan struct{}  // closed when the run's goroutine returns
	scope  chan struct{}  // the incarnation's scope when it started (closed by the next one)
}

// yieldNote says why a run gave the turn back.
type yieldNote struct {
	kind  yieldKind
	panic any // yieldPanicked: the value, re-raised on the actor
}

type yieldKind int

const (
	yieldParked    yieldKind = iota + 1 // an effect is under way; the result comes as a resumeMsg
	yieldFinished                       // the item is done
	yieldPanicked                       // the item panicked
	yieldAbandoned                      // the run unwound on its own (Close, or a new incarnation)
)

// resumeMsg is the result of a run's effect coming back to the actor: the
// run waits for the turn. round is the round the run started in; a run
// that is not the running one of the current round is abandoned.
type resumeMsg struct {
	run   *eventRun
	round uint64
}

// queryMsg asks the actor how many items wait behind the running one
// (EventQueueSize); the actor answers it at once, even while an event's
// effect is under way.
type queryMsg struct {
	reply chan int // buffered (1)
}

// queued is one item of c.queue: an event or a call.
type queued struct {
	ev   *event
	call *callMsg
}

// errAbandoned unwinds an abandoned run (see the file comment).
type errAbandoned struct{}

// enqueue adds an item behind the running one and starts it when nothing
// runs. On the actor.
func (c *Controller) enqueue(q queued) {
	c.queue = append(c.queue, q)
	c.runNext()
}

// runNext starts queued items while none is running (an item without
// effects finishes within its first turn). On the actor.
func (c *Controller) runNext() {
	for c.running == nil && len(c.queue) > 0 {
		q := c.queue[0]
		c.queue[0] = queued{}
		c.queue = c.queue[1:]
		if q.ev != nil {
			ev := *q.ev
			c.startRun(func() { c.handle(ev) }, nil)
		} else {
			c.startRun(q.call.fn, q.call.done)
		}
	}
}

// startRun runs fn as the running item (done: a call's answer channel, or
// nil) and gives it its first turn. On the actor.
func (c *Controller) startRun(fn func(), done chan error) {
	r := &eventRun{round: c.round, resume: make(chan bool, 1), yield: make(chan yieldNote, 1),
		gone: make(chan struct{}), scope: c.scope}
	c.running = r
	c.co.Store(r)
	c.wg.Add(1)
	go c.runItem(r, fn, done)
	c.takeTurnBack(r)
}

// runItem is a run's goroutine: fn, then the answer to the caller and the
// last yield.
func (c *Controller) runItem(r *eventRun, fn func(), done chan error) {
	defer c.wg.Done()
	defer close(r.gone)
	defer func() {
		v := recover()
		switch {
		case v == nil:
			if done != nil {
				done <- nil
			}
			r.yield <- yieldNote{kind: yieldFinished}
		case isAbandoned(v):
			// Not the actor's turn: touch nothing but the caller's channel.
			if done != nil {
				done <- errf(kerr.NotController, "the controller restarted while handling this request; retry")
			}
		default:
			c.log.Error("controller event panicked", zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			if done != nil {
				done <- errf(kerr.NotController, "the controller failed while handling this request (%v); retry", v)
			}
			r.yield <- yieldNote{kind: yieldPanicked, panic: v}
		}
	}()
	fn()
}

func isAbandoned(v any) bool { _, ok := v.(errAbandoned); return ok }

// takeTurnBack waits, on the actor, until run r yields the turn (it runs
// controller code meanwhile, no I/O), then acts on why: a parked run waits
// for its resumeMsg; a finished one lets the next item start; a panic is
// re-raised on the actor, so the supervisor restarts it (the queue
// survives the restart).
func (c *Controller) takeTurnBack(r *eventRun) {
	var y yieldNote
	select {
	case y = <-r.yield:
	case <-r.gone:
		select {
		case y = <-r.yield:
		default:
			y = yieldNote{kind: yieldAbandoned}
		}
	}
	c.co.Store(nil)
	switch y.kind {
	case yieldParked:
		return
	case yieldPanicked:
		c.running = nil
		panic(y.panic)
	default:
		c.running = nil
		c.runNext()
	}
}

// onResume continues the run whose effect completed, or abandons it when
// it belongs to an older round. On the actor.
func (c *Controller) onResume(m *resumeMsg) {
	if m.run != c.running || m.round != c.round {
		m.run.resume <- false // stale: its result is dropped, the run unwinds
		return
	}
	c.co.Store(m.run)
	m.run.resume <- true
	c.takeTurnBack(m.run)
}

// newRound abandons the running item (its effect's result will be
// dropped) and starts a new round; the queued items stay, in order. On
// the actor, when an incarnation starts.
func (c *Controller) newRound() {
	c.round++
	c.running = nil
}

// offActor runs io, an effect of the running event, off the actor: the run
// yields the turn, runs io on its own goroutine, and continues when the
// actor hands the turn back. Outside an event (Start, Close, a rejoin
// after giving up, tests calling internals) io runs inline. io must not
// touch controller state and must use c.store, never c.meta (it runs
// without the turn). An abandoned run does not return from here.
func (c *Controller) offActor(io func()) {
	r := c.co.Load()
	if r == nil {
		io()
		return
	}
	r.yield <- yieldNote{kind: yieldParked}
	io()
	c.send(&resumeMsg{run: r, round: r.round})
	select {
	case ok := <-r.resume:
		if ok {
			return
		}
	case <-c.stop:
	case <-r.scope:
	}
	panic(errAbandoned{})
}

// send delivers m to the controller actor; dropped when none runs.
func (c *Controller) send(m any) {
	c.life.Lock()
	r := c.cur
	c.life.Unlock()
	if r != nil {
		c.asys.Root.Send(r.pid, m)
	}
}

// EventQueueSize is the number of controller events and requests waiting
// behind the one being handled (Kafka's
// kafka.controller:type=ControllerEventManager,name=EventQueueSize). The
// actor answers it at once, even while the current event waits for
// ZooKeeper. Errors: NOT_CONTROLLER when no actor runs; the context's
// error when ctx ends first.
func (c *Controller) EventQueueSize(ctx context.Context) (int, error) {
	c.life.Lock()
	r := c.cur
	c.life.Unlock()
	if r == nil {
		return 0, errf(kerr.NotController, "the controller is not running on this broker")
	}
	reply := make(chan int, 1)
	c.asys.Root.Send(r.pid, &queryMsg{reply: reply})
	select {
	case n := <-reply:
		return n, nil
	case <-r.stopped:
		return 0, errf(kerr.NotController, "the controller stopped")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// eventStore is the metastore as controller events use it (c.meta): each
// call is an effect (offActor), so an event waiting for ZooKeeper or the
// embedded store never holds the actor. Outside an event it calls the
// store directly. Code that runs on other goroutines (the broker-side
// handlers, Start, Close) uses c.store.
type eventStore struct {
	c *Controller
	s metastore.Store
}

var _ metastore.Store = eventStore{}

func (e eventStore) Create(path string, data []byte, ephemeral bool) (err error) {
	e.c.offActor(func() { err = e.s.Create(path, data, ephemeral) })
	return err
}

func (e eventStore) CreateSequential(prefix string, data []byte, ephemeral bool) (p string, err error) {
	e.c.offActor(func() { p, err = e.s.CreateSequential(prefix, data, ephemeral) })
	return p, err
}

func (e eventStore) Get(path string) (data []byte, version int32, err error) {
	e.c.offActor(func() { data, version, err = e.s.Get(path) })
	return data, version, err
}

func (e eventStore) GetW(path string) (data []byte, version int32, w <-chan metastore.Event, err error) {
	e.c.offActor(func() { data, version, w, err = e.s.GetW(path) })
	return data, version, w, err
}

func (e eventStore) Set(path string, data []byte, version int32) (v int32, err error) {
	e.c.offActor(func() { v, err = e.s.Set(path, data, version) })
	return v, err
}

func (e eventStore) Delete(path string, version int32) (err error) {
	e.c.offActor(func() { err = e.s.Delete(path, version) })
	return err
}

func (e eventStore) Children(path string) (kids []string, err error) {
	e.c.offActor(func() { kids, err = e.s.Children(path) })
	return kids, err
}

func (e eventStore) ChildrenW(path string) (kids []string, w <-chan metastore.Event, err error) {
	e.c.offActor(func() { kids, w, err = e.s.ChildrenW(path) })
	return kids, w, err
}

func (e eventStore) Exists(path string) (ok bool, err error) {
	e.c.offActor(func() { ok, err = e.s.Exists(path) })
	return ok, err
}

func (e eventStore) ExistsW(path string) (ok bool, w <-chan metastore.Event, err error) {
	e.c.offActor(func() { ok, w, err = e.s.ExistsW(path) })
	return ok, w, err
}

func (e eventStore) Multi(ops ...metastore.Op) (res []metastore.OpResult, err error) {
	e.c.offActor(func() { res, err = e.s.Multi(ops...) })
	return res, err
}

// Close is refused: the store belongs to the broker.
func (e eventStore) Close() error { return errors.New("controller: events do not close the store") }

// OnSession registers on the underlying store (no I/O).
func (e eventStore) OnSession(fn func(metastore.SessionEvent)) (remove func()) {
	return e.s.OnSession(fn)
}
