package coordinator

// The group actor: one per group in use, owning its Group; spawned and
// watched by the router (coordinator.go). It runs the group's appends to
// __consumer_offsets on a goroutine of its own, one at a time, and feeds
// each outcome back as a message.

import (
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/actors"
)

// seed hands the state loaded with the partition to a group actor's first
// incarnation; a restarted incarnation reloads from the log instead.
type seed struct {
	loaded *Loaded
	used   bool
}

// groupActor owns one Group.
type groupActor struct {
	c         *Coordinator
	router    *actor.PID // the router (not its parent: see Coordinator)
	id        string
	partition int32
	seed      *seed
	g         *Group
	timer     *time.Timer
	timerAt   time.Time
	preparing bool // the group was in PreparingRebalance after the last message (rebalance counter)
	// applying is the GroupRequest being handled: set from Apply until
	// after has sent its groupDone, so on Restarting (or Stopping, when
	// its guardian gives up) it is the request that panicked.
	applying *GroupRequest
	// listing is where the actor publishes the group's ListGroups entry;
	// shared by the actor's incarnations (a restart keeps it).
	listing *listingSlot
	// writes are the group's appends not yet done, in order; the first is
	// in flight (performed by a goroutine of the actor's, see
	// startWrite) when writing is its id.
	writes  []pendingWrite
	writing uint64
}

// writeSeq numbers the appends of every group actor, so an outcome that
// reaches an incarnation that did not start it (a restart came between)
// is recognised and dropped.
var writeSeq atomic.Uint64

// writeDone is the outcome of a group's append, sent by its goroutine.
type writeDone struct {
	id     uint64
	offset int64 // the batch's log offset when err is nil
	err    error
}

// errAbandoned is the outcome given to the appends of a group actor that
// stops or restarts before they are done: its requests are answered with
// code (a write may still land in the log; clients retry, and offsets and
// group records are idempotent to write again).
type errAbandoned struct{ code int16 }

func (e errAbandoned) Error() string {
	return "group actor stopped before the append was done: " + kerr.ErrorForCode(e.code).Error()
}

func (a *groupActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.start()
		a.after(ctx, false)
	case *actor.Restarting:
		a.stopTimer()
		a.abandon(ctx, kerr.CoordinatorNotAvailable.Code)
	case *actor.Stopping:
		a.stopTimer()
		a.abandon(ctx, kerr.NotCoordinator.Code)
	case *GroupRequest:
		a.applying = m
		a.g.hold()
		m.Apply(a.g, a.c.opts.Now())
		a.after(ctx, true)
		a.applying = nil
	case groupTick:
		a.timerAt = time.Time{}
		a.g.hold()
		a.g.Tick(a.c.opts.Now())
		a.after(ctx, false)
	case expireOffsets:
		a.g.hold()
		if n := a.g.ExpireOffsets(a.c.opts.Now()); n > 0 {
			a.c.log.Info("expired offsets", zap.String("group", a.id), zap.Int("count", n))
		}
		a.after(ctx, false)
	case *writeDone:
		if m.id != a.writing {
			return // started by an earlier incarnation
		}
		a.writing = 0
		w := a.writes[0]
		a.writes[0] = pendingWrite{}
		a.writes = a.writes[1:]
		if m.err != nil {
			a.c.log.Warn("appending to "+OffsetsTopicName+" failed", zap.String("group", a.id), zap.Int32("partition", a.partition), zap.Int("records", len(w.batch.Records)), zap.Error(m.err))
		}
		a.g.hold()
		w.done(a.c.opts.Now(), m.offset, m.err)
		a.after(ctx, false)
	case *deleteTopics:
		a.g.hold()
		n, err := a.g.RemoveTopicOffsets(a.c.opts.Now(), m.topics)
		if err != nil {
			a.c.log.Warn("writing tombstones for offsets of deleted topics", zap.String("group", a.id), zap.Error(err))
		}
		if n > 0 {
			a.c.log.Info("removed offsets of deleted topics", zap.String("group", a.id), zap.Int("count", n), zap.String("state", a.g.State().String()))
		}
		a.after(ctx, false)
	}
}

// abandon answers what the group still owes when the actor restarts
// (after a panic) or stops: first the answers the message that panicked had
// already given (held in the outbox; publishing its listing is skipped,
// since the state is suspect and a restart republishes), then the request
// that panicked, then the pending JoinGroup and SyncGroup with code.
func (a *groupActor) abandon(ctx actor.Context, code int16) {
	if a.g != nil {
		a.g.release()
	}
	a.failApplying(ctx)
	if a.g != nil {
		a.failWrites(code)
		a.g.Shutdown(code)
	}
}

// failWrites gives every append not yet done (the one in flight included:
// its outcome, if it comes, is dropped) the outcome errAbandoned{code},
// delivering the answers that waited for them.
func (a *groupActor) failWrites(code int16) {
	writes := append(a.writes, a.g.takeWrites()...)
	a.writes, a.writing = nil, 0
	if len(writes) == 0 {
		return
	}
	now := a.c.opts.Now()
	a.g.hold()
	for _, w := range writes {
		w.done(now, -1, errAbandoned{code})
	}
	a.g.release()
}

// startWrite performs the group's next append, if none is in flight, on a
// goroutine the actor owns (counted in the coordinator's wait group,
// bounded by AppendTimeout and ended by Stop): its outcome comes back as
// a writeDone. One at a time, so the group's records reach the log in the
// order the group asked for them.
func (a *groupActor) startWrite(ctx actor.Context) {
	if a.writing != 0 || len(a.writes) == 0 {
		return
	}
	id := writeSeq.Add(1)
	a.writing = id
	b, store := a.writes[0].batch, a.g.store
	self, root, c := ctx.Self(), a.c.sys.Root, a.c
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		off, err := store.Append(b)
		root.Send(self, &writeDone{id: id, offset: off, err: err})
	}()
}

// failApplying answers the request whose Apply panicked (if any) with
// COORDINATOR_NOT_AVAILABLE — retriable: clients look the coordinator up
// again and retry, as with Kafka's unavailable coordinator — and tells the
// router it is done, as after would have. Replies are guarded (reply
// once), so a request that had already answered before panicking is not
// answered twice.
func (a *groupActor) failApplying(ctx actor.Context) {
	req := a.applying
	if req == nil {
		return
	}
	a.applying = nil
	a.c.log.Warn("group request panicked; answering COORDINATOR_NOT_AVAILABLE", zap.String("group", a.id), zap.String("api", req.API))
	req.Fail(kerr.CoordinatorNotAvailable.Code)
	ctx.Send(a.router, &groupDone{group: a.id, pid: ctx.Self(), counted: true})
}

func (a *groupActor) start() {
	now := a.c.opts.Now()
	store := a.c.storeFor(a.partition)
	if !a.seed.used {
		a.seed.used = true
		a.g = RestoreGroup(a.id, a.c.opts.Config, store, a.seed.loaded, now)
		a.g.deferWrites()
		a.seed.loaded = nil
		return
	}
	// Restarted after a panic: the in-memory state may be corrupt, so
	// rebuild it from what was committed to __consumer_offsets.
	l := NewGroupLoader(a.id)
	err := a.c.opts.Topic.Load(a.c.ctx, a.partition, func(rec *LogRecord) error {
		_ = l.ApplyRecord(rec)
		return nil
	})
	if err != nil {
		a.c.log.Error("reloading group after restart", zap.String("group", a.id), zap.Error(err))
	}
	a.g = RestoreGroup(a.id, a.c.opts.Config, store, l.Groups[a.id], now)
	a.g.deferWrites()
	a.c.log.Info("group actor restarted and reloaded", zap.String("group", a.id), zap.String("state", a.g.State().String()), zap.Int32("generation", a.g.Generation()))
}

// after ends the handling of a message: it forgets a group that became
// Dead, re-arms the timer for the group's next deadline, takes the appends
// the group queued, publishes the group's listing, tells the router, and
// only then releases the answers held in the group's outbox, so a client
// acting on one sees the change; last it starts the next append.
func (a *groupActor) after(ctx actor.Context, counted bool) {
	now := a.c.opts.Now()
	if a.g.Exists() && a.g.State() == Dead {
		a.g.forget(now)
	}
	if p := a.g.State() == PreparingRebalance; p != a.preparing {
		if a.preparing = p; p {
			actors.Emit(a.c.sys, actors.EventGroupRebalance, a.id, "")
		}
	}
	next := a.g.NextDeadline()
	if !next.Equal(a.timerAt) {
		a.stopTimer()
		if !next.IsZero() {
			d := next.Sub(now)
			if d < 0 {
				d = 0
			}
			self, root := ctx.Self(), a.c.sys.Root
			a.timer = time.AfterFunc(d, func() { root.Send(self, groupTick{}) })
			a.timerAt = next
		}
	}
	a.writes = append(a.writes, a.g.takeWrites()...)
	// A group with appends to do is kept: their answers wait for them.
	removable := a.g.Removable() && len(a.writes) == 0
	a.listing.set(a.g.Listing(), !a.g.Removable())
	ctx.Send(a.router, &groupDone{group: a.id, pid: ctx.Self(), counted: counted, removable: removable})
	a.g.release()
	a.startWrite(ctx)
}

func (a *groupActor) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
	a.timerAt = time.Time{}
}
