package actors

import (
	"sync"
	"time"
)

// ReplyOnce wraps reply so that it runs at most once, and with onTimeout's
// answer if no other answer came within d: a request whose message was lost
// with a crashed or stopped actor still gets an answer (the coordinators
// answer COORDINATOR_NOT_AVAILABLE-style retriable codes). The returned
// function may be called from any goroutine; later calls are ignored.
func ReplyOnce[T any](d time.Duration, reply func(T), onTimeout func() T) func(T) {
	var mu sync.Mutex
	done := false
	var t *time.Timer
	f := func(r T) {
		mu.Lock()
		if done {
			mu.Unlock()
			return
		}
		done = true
		if t != nil {
			t.Stop()
		}
		mu.Unlock()
		reply(r)
	}
	mu.Lock()
	t = time.AfterFunc(d, func() { f(onTimeout()) })
	mu.Unlock()
	return f
}
