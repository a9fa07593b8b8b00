package metastore

import "fmt"

// MemorySession is one session on a Memory ensemble: a Store whose
// ephemeral nodes and watches are its own. Expire, Disconnect and
// Reconnect inject the session faults a real ZooKeeper produces, with the
// outcomes zkstore reports for them:
//
//   - Expire (the ensemble ends the session; a kill -9'd broker's session
//     after zookeeper.session.timeout.ms): its ephemeral nodes are deleted
//     at once (other sessions' watches fire), its own pending watches
//     receive EventNotWatching, and OnSession callbacks see Disconnected,
//     Expired (old id) and Established (a new id), as go-zookeeper reports
//     a server-side expiry followed by its automatic new session. The
//     handle stays usable in the new session.
//   - Disconnect (the connection drops; ZooKeeper is unreachable): callbacks
//     see Disconnected, and every call fails with ErrConnectionLoss until
//     Reconnect. Watch events that happen meanwhile are held back.
//   - Reconnect within the session timeout: callbacks see Reconnected (same
//     id); the ephemerals are intact and the held watch events are
//     delivered now, as ZooKeeper's SetWatches replays them. After an
//     Expire while disconnected the client learns of the expiry only now:
//     Expired, NotWatching on every watch, then Established.
type MemorySession struct {
	m *Memory

	// Guarded by m.mu.
	id          int64
	closed      bool
	down        bool // Disconnect: calls fail with ErrConnectionLoss
	expiredDown bool // expired by the ensemble while down; reported on Reconnect
	lingering   bool // closed while down: its ephemerals stay until Expire
	oldID       int64
	dataW       map[string][]chan Event // GetW and ExistsW
	childW      map[string][]chan Event // ChildrenW
	held        []heldEvent             // fired while down, delivered on Reconnect

	events *SessionEvents // OnSession delivery
}

// heldEvent is a watch event waiting for the session to reconnect.
type heldEvent struct {
	ch chan Event
	ev Event
}

var _ Store = (*MemorySession)(nil)

// SessionID is the session's current id (a new one after each Expire).
func (s *MemorySession) SessionID() int64 {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return s.id
}

// Expire ends the session on the ensemble's side (see MemorySession). On
// a handle closed while disconnected it deletes the ephemerals left
// behind; on any other closed handle it does nothing.
func (s *MemorySession) Expire() {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.expiredDown {
		return
	}
	if s.closed {
		if s.lingering { // the session of a handle closed while cut off
			s.lingering = false
			m.dropEphemeralsLocked(s.id)
		}
		return
	}
	if s.down {
		// The ensemble acts now; the client hears of it on Reconnect.
		s.expiredDown, s.oldID = true, s.id
		s.loseWatchesLocked()
		m.dropEphemeralsLocked(s.id)
		return
	}
	old := s.id
	s.loseWatchesLocked()
	m.dropEphemeralsLocked(old)
	s.id = m.newIDLocked()
	s.enqueueLocked(SessionEvent{State: SessionDisconnected, SessionID: old})
	s.enqueueLocked(SessionEvent{State: SessionExpired, SessionID: old})
	s.enqueueLocked(SessionEvent{State: SessionEstablished, SessionID: s.id})
}

// Disconnect cuts the session off the ensemble (see MemorySession). A
// no-op when already disconnected or closed.
func (s *MemorySession) Disconnect() {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.closed || s.down {
		return
	}
	s.down = true
	s.enqueueLocked(SessionEvent{State: SessionDisconnected, SessionID: s.id})
}

// Reconnect ends a Disconnect (see MemorySession). A no-op when connected.
func (s *MemorySession) Reconnect() {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.closed || !s.down {
		return
	}
	s.down = false
	if s.expiredDown {
		s.expiredDown = false
		s.enqueueLocked(SessionEvent{State: SessionExpired, SessionID: s.oldID})
		s.deliverHeldLocked() // all NotWatching
		s.id = m.newIDLocked()
		s.enqueueLocked(SessionEvent{State: SessionEstablished, SessionID: s.id})
		return
	}
	s.enqueueLocked(SessionEvent{State: SessionReconnected, SessionID: s.id})
	s.deliverHeldLocked()
}

// Disconnected reports whether the session is cut off (Disconnect).
func (s *MemorySession) Disconnected() bool {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return s.down
}

// loseWatchesLocked ends every pending watch of the session with
// EventNotWatching: delivered now when connected, on Reconnect when down.
func (s *MemorySession) loseWatchesLocked() {
	for i := range s.held {
		s.held[i].ev.Type = EventNotWatching
	}
	for _, w := range []map[string][]chan Event{s.dataW, s.childW} {
		for p, chs := range w {
			for _, ch := range chs {
				s.held = append(s.held, heldEvent{ch, Event{Type: EventNotWatching, Path: p}})
			}
			delete(w, p)
		}
	}
	if !s.down {
		s.deliverHeldLocked()
	}
}

func (s *MemorySession) deliverHeldLocked() {
	for _, h := range s.held {
		h.ch <- h.ev // buffered 1 and fired once: never blocks
		close(h.ch)
	}
	s.held = nil
}

func (s *MemorySession) table(set watchSet) map[string][]chan Event {
	if set == childWatches {
		return s.childW
	}
	return s.dataW
}

// fireLocked delivers one event to the session's watches on p (one-shot).
func (s *MemorySession) fireLocked(set watchSet, p string, t EventType) {
	w := s.table(set)
	chs := w[p]
	if len(chs) == 0 {
		return
	}
	delete(w, p)
	for _, ch := range chs {
		if s.down {
			s.held = append(s.held, heldEvent{ch, Event{Type: t, Path: p}})
			continue
		}
		ch <- Event{Type: t, Path: p}
		close(ch)
	}
}

func (s *MemorySession) watchLocked(set watchSet, p string) <-chan Event {
	ch := make(chan Event, 1)
	w := s.table(set)
	w[p] = append(w[p], ch)
	return ch
}

// enterLocked is every call's gate, in zkstore's order: a closed handle,
// then the path, then the connection.
func (s *MemorySession) enterLocked(p string) error {
	if s.closed {
		return ErrClosed
	}
	if err := ValidatePath(p); err != nil {
		return err
	}
	if s.down {
		return fmt.Errorf("%w (memory session 0x%x disconnected)", ErrConnectionLoss, s.id)
	}
	return nil
}

// Create implements Store.
func (s *MemorySession) Create(p string, data []byte, ephemeral bool) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.enterLocked(p); err != nil {
		return err
	}
	return s.m.createLocked(p, data, ephemeral, s.id)
}

// CreateSequential implements Store.
func (s *MemorySession) CreateSequential(prefix string, data []byte, ephemeral bool) (string, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.enterLocked(prefix); err != nil {
		return "", err
	}
	parent, ok := s.m.nodes[Parent(prefix)]
	if !ok {
		return "", ErrNoNode
	}
	p := fmt.Sprintf("%s%010d", prefix, parent.cseq)
	if err := s.m.createLocked(p, data, ephemeral, s.id); err != nil {
		return "", err
	}
	parent.cseq++
	return p, nil
}

// Get implements Store.
func (s *MemorySession) Get(p string) ([]byte, int32, error) {
	data, v, _, err := s.get(p, false)
	return data, v, err
}

// GetW implements Store.
func (s *MemorySession) GetW(p string) ([]byte, int32, <-chan Event, error) {
	return s.get(p, true)
}

func (s *MemorySession) get(p string, watch bool) ([]byte, int32, <-chan Event, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.enterLocked(p); err != nil {
		return nil, 0, nil, err
	}
	n, ok := s.m.nodes[p]
	if !ok {
		return nil, 0, nil, ErrNoNode
	}
	var w <-chan Event
	if watch {
		w = s.watchLocked(dataWatches, p)
	}
	return clone(n.data), n.version, w, nil
}

// Set implements Store.
func (s *MemorySession) Set(p string, data []byte, version int32) (int32, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.enterLocked(p); err != nil {
		return 0, err
	}
	return s.m.setLocked(p, data, version)
}

// Delete implements Store.
func (s *MemorySession) Delete(p string, version int32) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.enterLocked(p); err != nil {
		return err
	}
	return s.m.deleteLocked(p, version)
}

// Children implements Store.
func (s *MemorySession) Children(p string) ([]string, error) {
	kids, _, err := s.children(p, false)
	return kids, err
}

// ChildrenW implements Store.
func (s *MemorySession) ChildrenW(p string) ([]string, <-chan Event, error) {
	return s.children(p, true)
}

func (s *MemorySession) children(p string, watch bool) ([]string, <-chan Event, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.enterLocked(p); err != nil {
		return nil, nil, err
	}
	n, ok := s.m.nodes[p]
	if !ok {
		return nil, nil, ErrNoNode
	}
	var w <-chan Event
	if watch {
		w = s.watchLocked(childWatches, p)
	}
	return sortedKeys(n.children), w, nil
}

// Exists implements Store.
func (s *MemorySession) Exists(p string) (bool, error) {
	ok, _, err := s.exists(p, false)
	return ok, err
}

// ExistsW implements Store.
func (s *MemorySession) ExistsW(p string) (bool, <-chan Event, error) {
	return s.exists(p, true)
}

func (s *MemorySession) exists(p string, watch bool) (bool, <-chan Event, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.enterLocked(p); err != nil {
		return false, nil, err
	}
	_, ok := s.m.nodes[p]
	var w <-chan Event
	if watch {
		w = s.watchLocked(dataWatches, p)
	}
	return ok, w, nil
}

// Multi implements Store.
func (s *MemorySession) Multi(ops ...Op) ([]OpResult, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.enterLocked("/"); err != nil {
		return nil, err
	}
	return s.m.multiLocked(ops, s.id)
}

// Close implements Store: the session's ephemeral nodes are deleted (the
// other sessions' watches fire), its pending watches receive
// EventNotWatching, its dispatcher has stopped when Close returns, and
// later calls return ErrClosed. Closed while disconnected, the handle ends
// but its session does not: the ephemerals stay until Expire (a process
// killed while ZooKeeper still holds its session). Idempotent.
func (s *MemorySession) Close() error {
	m := s.m
	m.mu.Lock()
	if s.closed {
		m.mu.Unlock()
		s.events.Close()
		return nil
	}
	s.closed = true
	switch {
	case s.expiredDown: // its ephemerals are gone already
	case s.down:
		// The close cannot reach the ensemble: the session and its
		// ephemerals live on until it expires (Expire), as a killed
		// process's do until zookeeper.session.timeout.ms has passed.
		s.lingering = true
	default:
		m.dropEphemeralsLocked(s.id)
	}
	s.down = false // held events go out as NotWatching below
	s.loseWatchesLocked()
	delete(m.sessions, s)
	m.mu.Unlock()
	s.events.Close() // outside m.mu: a running callback may call the store
	return nil
}

// OnSession implements Store. Callbacks run on the session's dispatcher
// goroutine, in registration order, one event at a time.
func (s *MemorySession) OnSession(fn func(SessionEvent)) (remove func()) {
	return s.events.OnSession(fn)
}

func (s *MemorySession) enqueueLocked(ev SessionEvent) { s.events.Publish(ev) }
