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

// forget turns a Dead group back into an unknown one, keeping its outbox:
// Kafka removes a group from its cache as it becomes Dead (deleted, or
// emptied by offset expiration or topic deletion), so the next request
// finds no group (a JoinGroup or simple commit starts a new one) rather
// than a Dead one.
func (g *Group) forget(now time.Time) {
	held, holding := g.held, g.holding
	*g = *NewGroup(g.id, g.cfg, g.store, now)
	g.held, g.holding = held, holding
}
