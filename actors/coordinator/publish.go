package coordinator

import (
	"sync/atomic"
	"time"
)

// What a request changed must be visible to the next request as soon as
// its answer is out: Kafka updates a group's metadata under the group lock
// before it sends the response, so a client that got its DeleteGroups,
// JoinGroup or LeaveGroup answer never lists the group as it was before.
// Here the group actor publishes the group's ListGroups entry (a
// listingSlot the router reads) before it releases the answers of the
// message it handled: every answer made through viaOutbox waits in the
// group's outbox until then.

// listingSlot is one group's ListGroups entry. Its group actor writes it
// (after every message, only when it changed) and the router reads it to
// answer ListGroups; the router owns which slots are listed (one per group
// actor it knows). nil means not listed: the group is unknown or Dead.
type listingSlot struct{ p atomic.Pointer[Listing] }

// set publishes the group's entry (shown false: not listed).
func (s *listingSlot) set(l Listing, shown bool) {
	cur := s.p.Load()
	switch {
	case !shown:
		if cur != nil {
			s.p.Store(nil)
		}
	case cur == nil || *cur != l:
		s.p.Store(&l)
	}
}

// get is the published entry.
func (s *listingSlot) get() (Listing, bool) {
	if l := s.p.Load(); l != nil {
		return *l, true
	}
	return Listing{}, false
}

// hold makes the answers given through reply wait in the group's outbox
// until release (the owner holds while it handles one message).
func (g *Group) hold() { g.holding = true }

// release stops holding and delivers the answers held, in order.
func (g *Group) release() {
	held := g.held
	g.held, g.holding = nil, false
	for i, f := range held {
		held[i] = nil
		f()
	}
	if g.held == nil {
		g.held = held[:0] // reuse the outbox
	}
}

// post delivers f now, or at release while the group is held.
func (g *Group) post(f func()) {
	if g.holding {
		g.held = append(g.held, f)
		return
	}
	f()
}

// viaOutbox wraps an answer callback of a request to g so that it is
// delivered through g's outbox (see hold).
func viaOutbox[T any](g *Group, f func(T)) func(T) {
	return func(v T) { g.post(func() { f(v) }) }
}

// forget turns a Dead group back into an unknown one, keeping its outbox
// (answers and queued appends) and starting a new incarnation: Kafka
// removes a group from its cache as it becomes Dead (deleted, or emptied
// by offset expiration or topic deletion), so the next request finds no
// group (a JoinGroup or simple commit starts a new one) rather than a Dead
// one. An append the forgotten group asked for still completes into this
// Group object, possibly once a new group of the same id lives in it: its
// callback sees that the incarnation changed (current) and only answers
// its request, as Kafka's callbacks do for a group that is no longer the
// one in the cache.
func (g *Group) forget(now time.Time) {
	held, holding, writes, deferred, mem := g.held, g.holding, g.writes, g.deferred, g.memOffset
	inc := g.incarnation + 1
	*g = *NewGroup(g.id, g.cfg, g.store, now)
	g.held, g.holding, g.writes, g.deferred, g.memOffset = held, holding, writes, deferred, mem
	g.incarnation = inc
}

// current reports whether inc, the incarnation captured when a write was
// asked for, is still the group's: false once the group that asked was
// forgotten, whatever state and generation the new group has reached.
func (g *Group) current(inc uint64) bool { return g.incarnation == inc }

// The outbox also carries the records the group asked to persist. Kafka's
// GroupMetadataManager appends a commit's or a rebalance's records to
// __consumer_offsets and completes the request in the append's callback
// (a delayed produce waiting for acks=-1); the group lock is free
// meanwhile, so heartbeats, leaves and session expiry go on. Here the
// group queues each append with what to do with its outcome (pendingWrite);
// its owner takes the queue (takeWrites) once it has handled the message,
// performs the appends off its goroutine, one at a time and in order, and
// feeds each outcome back through the write's done, holding the outbox as
// for any message. A Group that does not defer its writes (the pure state
// machine of the tests, deferWrites not called) performs each append at
// once with its Store and runs done before write returns.

// pendingWrite is one append a group asked for: the records (one batch)
// and what the group does with the outcome. done runs on the group's
// owner, with the time the outcome came back; err is nil once the records
// are committed (acks=-1), or the Store's error; offset is then the log
// offset of the batch (see Store).
type pendingWrite struct {
	batch Batch
	done  func(now time.Time, offset int64, err error)
}

// deferWrites makes the group queue its appends in the outbox instead of
// performing them (the group actor calls it once, on creation).
func (g *Group) deferWrites() { g.deferred = true }

// write asks for recs to be appended to the group's __consumer_offsets
// partition and for done to run with the outcome (see writeBatch).
func (g *Group) write(now time.Time, recs []Record, done func(now time.Time, err error)) {
	g.writeBatch(now, Batch{Records: recs}, func(now time.Time, _ int64, err error) { done(now, err) })
}

// writeBatch asks for b to be appended to the group's __consumer_offsets
// partition and for done to run with the outcome: at once when the group
// has no Store (nothing is persisted: done(now, offset, nil) with an offset
// counted by the group, so log order still orders its commits) or does not
// defer its writes, else when its owner feeds the outcome back.
func (g *Group) writeBatch(now time.Time, b Batch, done func(now time.Time, offset int64, err error)) {
	switch {
	case g.store == nil:
		g.memOffset += int64(len(b.Records))
		done(now, g.memOffset, nil)
	case g.deferred:
		g.writes = append(g.writes, pendingWrite{batch: b, done: done})
	default:
		off, err := g.store.Append(b)
		done(now, off, err)
	}
}

// takeWrites hands the owner the appends queued since the last call, in
// the order they were asked for.
func (g *Group) takeWrites() []pendingWrite {
	w := g.writes
	g.writes = nil
	return w
}
