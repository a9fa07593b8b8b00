package metastore

import "sync"

// SessionEvents delivers a store's session events to its OnSession
// callbacks as the Store contract promises: one event at a time, in the
// order published, to every callback in registration order, on a
// goroutine of its own (so a publisher, such as go-zookeeper's event
// callback or a MemorySession fault, never waits on a callback). zkstore
// and MemorySession share it. Start it with NewSessionEvents; Close stops
// its goroutine.
type SessionEvents struct {
	mu        sync.Mutex
	queue     []SessionEvent
	last      SessionState // of the last event published; 0 before any
	callbacks map[int]func(SessionEvent)
	nextCB    int

	wake      chan struct{} // cap 1: the dispatcher has work
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// NewSessionEvents starts a dispatcher with no callbacks.
func NewSessionEvents() *SessionEvents {
	q := &SessionEvents{
		callbacks: map[int]func(SessionEvent){},
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	go q.dispatch()
	return q
}

// Publish queues ev for the callbacks; it never blocks.
func (q *SessionEvents) Publish(ev SessionEvent) {
	q.mu.Lock()
	q.queue = append(q.queue, ev)
	q.last = ev.State
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Last is the state of the last event published (0 before any).
func (q *SessionEvents) Last() SessionState {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.last
}

// OnSession implements Store.OnSession.
func (q *SessionEvents) OnSession(fn func(SessionEvent)) (remove func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	id := q.nextCB
	q.nextCB++
	q.callbacks[id] = fn
	return func() {
		q.mu.Lock()
		delete(q.callbacks, id)
		q.mu.Unlock()
	}
}

// Close stops the dispatcher (events still queued are dropped) and waits
// for it, so it must not be called from a callback. Idempotent.
func (q *SessionEvents) Close() {
	q.closeOnce.Do(func() { close(q.stop) })
	<-q.done
}

func (q *SessionEvents) dispatch() {
	defer close(q.done)
	for {
		select {
		case <-q.stop:
			return
		case <-q.wake:
		}
		for {
			q.mu.Lock()
			if len(q.queue) == 0 {
				q.mu.Unlock()
				break
			}
			ev := q.queue[0]
			q.queue = q.queue[1:]
			cbs := make([]func(SessionEvent), 0, len(q.callbacks))
			for i := 0; i < q.nextCB; i++ {
				if fn, ok := q.callbacks[i]; ok {
					cbs = append(cbs, fn)
				}
			}
			q.mu.Unlock()
			for _, fn := range cbs {
				select {
				case <-q.stop:
					return
				default:
				}
				fn(ev)
			}
		}
	}
}
