package controller

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// This file is the controller actor: the one place the controller's work
// is ordered (Kafka's ControllerEventThread as a supervised protoactor
// actor). Its messages are watch and retry events (cluster.go's event),
// calls from the exported methods (callMsg), both queued and run one at a
// time, and the results of their effects (turn.go's resumeMsg). Only the
// event holding the actor's turn reads and writes the controller's state;
// what other goroutines read of it is published in atomics (ClusterID,
// Epoch, ActiveEpoch, the metadata cache).

// ActorName is the controller actor's name (and path in GET /actors); its
// kind is "controller".
const ActorName = "controller"

// Supervision of the controller actor (README, Supervision policy): a
// panic restarts it after 100 ms doubling to 10 s (jittered); more than
// ActorMaxRestarts failures within ActorRestartWindow stop it, and the
// broker then resigns /controller (so another broker takes over) and
// spawns a fresh actor every RejoinInterval until one starts, which
// rejoins the election as a standby would.
const (
	ActorMaxRestarts   = 5
	ActorRestartWindow = time.Minute
	RejoinInterval     = 5 * time.Second
)

// CallTimeout bounds how long an exported method waits for the actor
// (Kafka's request.timeout.ms default, 30 s): past it the caller gets
// REQUEST_TIMED_OUT; the request may still run later.
const CallTimeout = 30 * time.Second

// callMsg runs fn on the actor, queued as an event (turn.go); done
// receives nil after fn, or a retriable error when fn panicked (the actor
// then restarts) or was abandoned by a restart.
type callMsg struct {
	fn   func()
	done chan error // buffered (1): the actor never blocks on it
}

// runner is one spawn of the controller actor (it survives restarts:
// same PID, same mailbox); stopped closes when it stops for good.
type runner struct {
	pid     *actor.PID
	stopped chan struct{}
	once    sync.Once
}

func (r *runner) markStopped() { r.once.Do(func() { close(r.stopped) }) }

// controllerActor is the actor; all state lives in the Controller, which
// outlives incarnations.
type controllerActor struct {
	c *Controller
	r *runner
}

// Receive implements actor.Actor. Events and calls are queued and run one
// at a time as eventRuns (turn.go); a run's effect results (resumeMsg)
// continue it; queries are answered at once. Nothing here waits for I/O.
func (a *controllerActor) Receive(ctx actor.Context) {
	c := a.c
	switch m := ctx.Message().(type) {
	case *actor.Started:
		c.onActorStarted()
	case event:
		c.enqueue(queued{ev: &m})
	case *callMsg:
		c.enqueue(queued{call: m})
	case *resumeMsg:
		c.onResume(m)
	case *queryMsg:
		m.reply <- len(c.queue)
	case *actor.Restarting:
		c.log.Warn("controller actor restarting: it will re-read ZooKeeper and resend its state")
	case *actor.Stopped:
		a.r.markStopped()
	}
}

// tell runs fn on the controller actor without waiting for it (dropped
// when no actor runs: the next incarnation re-reads everything).
func (c *Controller) tell(fn func()) {
	c.life.Lock()
	r := c.cur
	c.life.Unlock()
	if r != nil {
		c.asys.Root.Send(r.pid, &callMsg{fn: fn, done: make(chan error, 1)})
	}
}

// call runs fn on the controller actor and waits for it. Errors (all
// retriable): NOT_CONTROLLER when no actor runs, it stopped or crashed
// before answering, or the controller is closing; REQUEST_TIMED_OUT after
// CallTimeout.
func (c *Controller) call(fn func()) error {
	c.life.Lock()
	r := c.cur
	c.life.Unlock()
	if r == nil {
		return errf(kerr.NotController, "the controller is not running on this broker")
	}
	done := make(chan error, 1)
	c.asys.Root.Send(r.pid, &callMsg{fn: fn, done: done})
	t := time.NewTimer(CallTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-r.stopped:
	case <-c.stop:
	case <-t.C:
		select {
		case err := <-done:
			return err
		default:
		}
		return errf(kerr.RequestTimedOut, "the controller did not answer within %v", CallTimeout)
	}
	select {
	case err := <-done: // answered just before it stopped
		return err
	default:
	}
	return errf(kerr.NotController, "the controller stopped before handling this request; retry")
}

// newSupervision is the controller actor's strategy (see ActorMaxRestarts).
func (c *Controller) newSupervision() *actors.BackoffStrategy {
	return &actors.BackoffStrategy{Initial: 100 * time.Millisecond, Max: 10 * time.Second,
		MaxRetries: ActorMaxRestarts, Window: ActorRestartWindow,
		OnRestart: func(_ *actor.PID, reason any, delay time.Duration) {
			c.log.Error("controller actor failed, restarting", zap.Any("reason", reason), zap.Duration("delay", delay))
		},
		OnGiveUp: func(_ *actor.PID, reason any) { c.gaveUp(reason) },
	}
}

// spawn starts a new controller actor (unless closing).
func (c *Controller) spawn() error {
	c.life.Lock()
	defer c.life.Unlock()
	if c.closing {
		return fmt.Errorf("controller: closing")
	}
	r := &runner{stopped: make(chan struct{})}
	props := actors.Props(c.log, func() actor.Actor { return &controllerActor{c: c, r: r} }, actor.WithGuardian(c.supervision))
	pid, err := c.asys.Root.SpawnNamed(props, ActorName)
	if err != nil {
		return err
	}
	r.pid = pid
	c.cur = r
	return nil
}

// gaveUp runs on the supervisor's goroutine when the actor failed too
// often and was stopped: it must not block, so the resignation and the
// rejoin attempts run on a goroutine of the controller's.
func (c *Controller) gaveUp(reason any) {
	c.life.Lock()
	defer c.life.Unlock()
	r := c.cur
	c.cur = nil
	if r != nil {
		r.markStopped() // queued calls are discarded: their callers get NOT_CONTROLLER
	}
	if c.closing {
		return
	}
	c.wg.Add(1)
	go c.rejoin(reason)
}

// rejoin resigns /controller (another broker takes over, as when a Kafka
// controller's session ends), then spawns a fresh actor every
// RejoinInterval until one starts; it rejoins the election. It touches
// the controller's state while no actor runs (the last one stopped for
// good; the next is spawned after), and Close waits for it before it
// does the same.
func (c *Controller) rejoin(reason any) {
	defer c.wg.Done()
	c.log.Error("controller actor failed too often: resigning /controller, will rejoin",
		zap.Any("reason", reason), zap.Int("max.restarts", ActorMaxRestarts), zap.Duration("window", ActorRestartWindow))
	// The queued items were for the stopped actor (their callers got
	// NOT_CONTROLLER); a run still under way is abandoned by the next
	// incarnation's round.
	c.queue, c.running = nil, nil
	c.resignLocked("controller actor failed too often")
	c.deleteOwnControllerZnode()
	c.setActive(false)
	t := time.NewTimer(c.rejoinInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		err := c.spawn()
		if err == nil {
			c.log.Info("controller actor spawned again after giving up")
			return
		}
		c.log.Warn("respawning the controller actor failed, retrying", zap.Error(err))
		t.Reset(c.rejoinInterval)
	}
}

// holdsControllerZnode reports whether /controller names this broker,
// with the znode's version.
func (c *Controller) holdsControllerZnode() (bool, int32) {
	data, v, err := c.meta.Get(zkmeta.ControllerPath)
	if err != nil {
		return false, 0
	}
	id, err := zkmeta.DecodeController(data)
	return err == nil && id == c.cfg.BrokerID, v
}

// deleteOwnControllerZnode deletes /controller if it names this broker.
func (c *Controller) deleteOwnControllerZnode() {
	if held, v := c.holdsControllerZnode(); held {
		if err := c.meta.Delete(zkmeta.ControllerPath, v); err != nil {
			c.log.Warn("deleting /controller", zap.Error(err))
		}
	}
}

// onActorStarted runs in *actor.Started of every incarnation: it ends
// the previous incarnation's forwarders, timers and running event (a new
// round: its late results are dropped), then runs, ahead of the queued
// items, the first election (first start) or the recovery (restart or
// respawn).
func (c *Controller) onActorStarted() {
	if !c.started {
		return
	}
	close(c.scope)
	c.scope = make(chan struct{})
	c.armed = map[string]uint64{}
	c.incarnation++
	c.newRound()
	first := c.incarnation == 1
	c.startRun(func() {
		if !first {
			c.recoverLocked()
			return
		}
		if err := c.electAndWatchLocked(); err != nil {
			c.log.Warn("controller election failed, retrying", zap.Error(err))
			c.after(time.Second, event{kind: evController})
		}
	}, nil)
}

// recoverLocked is what a restarted controller actor does. Its in-memory
// state may be half-updated by the failure, so it trusts only ZooKeeper:
// when this broker was the active controller and still holds /controller,
// it takes over again as a newly elected controller does (bump the
// controller epoch, re-read brokers, topics, partition states and admin
// znodes, re-arm every watch, send UpdateMetadata and LeaderAndIsr to
// every live broker). Otherwise (standby, or a half-finished election,
// or the takeover failing) it releases a /controller it holds and
// re-registers and re-runs the election.
func (c *Controller) recoverLocked() {
	if held, _ := c.holdsControllerZnode(); c.active && held {
		err := c.meta.Create(zkmeta.BrokerPath(c.cfg.BrokerID), c.self.Encode(), true)
		if errors.Is(err, metastore.ErrNodeExists) {
			err = nil
		}
		oldLive := c.liveInfo
		if err == nil {
			err = c.bumpEpoch()
		}
		if err == nil {
			c.log.Info("controller actor restarted: re-reading ZooKeeper and resending state", zap.Int32("controller.epoch", c.epoch))
			err = c.onControllerFailover()
		}
		if err == nil {
			for id := range oldLive {
				if _, ok := c.liveInfo[id]; !ok && id != c.cfg.BrokerID {
					c.peers.RemoveBroker(id)
				}
			}
			err = c.electAndWatchLocked() // re-arms the /controller watch
		}
		if err == nil {
			return
		}
		c.log.Warn("taking over again after a restart failed: resigning", zap.Error(err))
	}
	c.resignLocked("controller actor restarted")
	c.deleteOwnControllerZnode()
	c.setActive(false)
	c.resyncLocked()
}
