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
		if s.hadSession && !s.expired && (len(s.queue) == 0 || s.queue[len(s.queue)-1].State != metastore.SessionDisconnected) {
			s.enqueueLocked(metastore.SessionEvent{State: metastore.SessionDisconnected, SessionID: s.lastSession})
		}
	}
}

func (s *Store) enqueueLocked(ev metastore.SessionEvent) {
	s.log.Sugar().Infof("zookeeper session %s (0x%x)", ev.State, ev.SessionID)
	s.queue = append(s.queue, ev)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// dispatch delivers queued session events to the callbacks, one at a
// time and in order, until the store closes.
func (s *Store) dispatch() {
	defer s.wg.Done()
	for {
		select {
		case <-s.closing:
			return
		case <-s.wake:
		}
		for {
			s.sessMu.Lock()
			if len(s.queue) == 0 {
				s.sessMu.Unlock()
				break
			}
			ev := s.queue[0]
			s.queue = s.queue[1:]
			cbs := make([]func(metastore.SessionEvent), 0, len(s.callbacks))
			for i := 0; i < s.nextCB; i++ {
				if fn, ok := s.callbacks[i]; ok {
					cbs = append(cbs, fn)
				}
			}
			s.sessMu.Unlock()
			for _, fn := range cbs {
				fn(ev)
			}
		}
	}
}

// OnSession implements metastore.Store. Callbacks run on the store's
// dispatcher goroutine, in registration order, one event at a time.
func (s *Store) OnSession(fn func(metastore.SessionEvent)) (remove func()) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	id := s.nextCB
	s.nextCB++
	s.callbacks[id] = fn
	return func() {
		s.sessMu.Lock()
		delete(s.callbacks, id)
		s.sessMu.Unlock()
	}
}
