package zkstore

import (
	"github.com/go-zookeeper/zk"

	"gregor/replication/metastore"
)

// onEvent is go-zookeeper's event callback. It runs on the client's own
// goroutines and must not block: it only records the transition and queues
// a session event for the dispatcher.
func (s *Store) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	switch ev.State {
	case zk.StateHasSession:
		id := int64(0)
		if s.conn != nil {
			id = s.conn.SessionID()
		}
		switch {
		case !s.hadSession:
			s.hadSession = true
			s.readyOnce.Do(func() { close(s.ready) })
		case s.expired || (id != 0 && s.lastSession != 0 && id != s.lastSession):
			s.enqueueLocked(metastore.SessionEvent{State: metastore.SessionEstablished, SessionID: id})
		default:
			s.enqueueLocked(metastore.SessionEvent{State: metastore.SessionReconnected, SessionID: id})
		}
		s.expired = false
		s.lastSession = id
	case zk.StateExpired:
		if s.hadSession && !s.expired {
			s.expired = true
			s.enqueueLocked(metastore.SessionEvent{State: metastore.SessionExpired, SessionID: s.lastSession})
		}
	case zk.StateDisconnected:
		// Reported on every connection loss (and again after an expiry):
		// only the first since the last session counts.
		if s.hadSession && !s.expired && s.events.Last() != metastore.SessionDisconnected {
			s.enqueueLocked(metastore.SessionEvent{State: metastore.SessionDisconnected, SessionID: s.lastSession})
		}
	}
}

func (s *Store) enqueueLocked(ev metastore.SessionEvent) {
	s.log.Sugar().Infof("zookeeper session %s (0x%x)", ev.State, ev.SessionID)
	s.events.Publish(ev)
}

// OnSession implements metastore.Store. Callbacks run on the store's
// dispatcher goroutine, in registration order, one event at a time.
func (s *Store) OnSession(fn func(metastore.SessionEvent)) (remove func()) {
	return s.events.OnSession(fn)
}
