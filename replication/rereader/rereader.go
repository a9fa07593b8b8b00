// Package rereader re-reads keys off the caller's goroutine: the
// /config/changes listener runs on the controller's goroutine and must not
// wait on the metadata store, so the watchers of SCRAM credentials
// (replication/usercreds), client quotas (quota/clientquota) and dynamic
// broker configs (config/dynamic) hand each changed key to a Rereader,
// whose own goroutine loads it, retrying a failed load with a bounded
// backoff until it succeeds or the Rereader is closed.
package rereader

import (
	"sync"
	"time"
)

// Backoff bounds: the first retry after MinBackoff, doubling to MaxBackoff.
const (
	MinBackoff = 100 * time.Millisecond
	MaxBackoff = 5 * time.Second
)

// Rereader loads the keys marked Changed on one goroutine of its own,
// each key once however often it was marked since its last load.
type Rereader[K comparable] struct {
	load   func(K) error
	failed func(K, error)

	mu      sync.Mutex
	pending map[K]bool
	kick    chan struct{} // 1-buffered: pending is not empty
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// Start runs the goroutine. load reads one key (from the store, into the
// caller's cache); failed, which may be nil, is told of each failed load
// (for a log line) before the key is retried. Close stops it.
func Start[K comparable](load func(K) error, failed func(K, error)) *Rereader[K] {
	r := &Rereader[K]{load: load, failed: failed, pending: map[K]bool{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go r.run()
	return r
}

// Changed schedules a load of k. It never blocks.
func (r *Rereader[K]) Changed(k K) {
	r.mu.Lock()
	r.pending[k] = true
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Close stops the goroutine and waits for it; pending keys are dropped.
// Idempotent.
func (r *Rereader[K]) Close() {
	r.once.Do(func() { close(r.stop) })
	<-r.done
}

func (r *Rereader[K]) run() {
	defer close(r.done)
	backoff := MinBackoff
	for {
		select {
		case <-r.stop:
			return
		case <-r.kick:
		}
		r.mu.Lock()
		keys := r.pending
		r.pending = map[K]bool{}
		r.mu.Unlock()
		failed := false
		for k := range keys {
			if err := r.load(k); err != nil {
				if r.failed != nil {
					r.failed(k, err)
				}
				r.Changed(k)
				failed = true
			}
		}
		if !failed {
			backoff = MinBackoff
			continue
		}
		t := time.NewTimer(backoff)
		select {
		case <-r.stop:
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, MaxBackoff)
	}
}
