package dynamic

import (
	"sync"
	"time"

	"go.uber.org/zap"

	"gregor/config"
	"gregor/replication/metastore"
)

// Watcher keeps a Manager current: each Changed(entity) — called by the
// /config/changes listener for a "brokers/<entity>" notification, on the
// controller's goroutine — re-reads the broker's dynamic configs on the
// watcher's own goroutine, so the caller never waits on the store. A read
// that fails is retried (bounded backoff) until it succeeds or the watcher
// closes; an update the broker cannot apply (a value its components
// refuse) is logged and skipped, the previous config staying in force.
type Watcher struct {
	store metastore.Store
	m     *Manager
	log   *zap.Logger

	kick chan struct{} // 1-buffered: a re-read is due
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// Watch starts the watcher goroutine over m (already Loaded); Close stops it.
func Watch(store metastore.Store, m *Manager, log *zap.Logger) *Watcher {
	if log == nil {
		log = zap.NewNop()
	}
	w := &Watcher{store: store, m: m, log: log, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// Changed schedules a re-read when entity is this broker's id or
// <default> (other brokers' entities are ignored, as Kafka's
// BrokerConfigHandler does). It never blocks.
func (w *Watcher) Changed(entity string) {
	if entity != config.DefaultEntity && entity != w.m.BrokerID() {
		return
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Close stops the goroutine and waits for it. Idempotent.
func (w *Watcher) Close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func (w *Watcher) run() {
	defer close(w.done)
	backoff := 100 * time.Millisecond
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
		}
		defaults, _, err := Read(w.store, config.DefaultEntity)
		var per map[string]string
		if err == nil {
			per, _, err = Read(w.store, w.m.BrokerID())
		}
		if err == nil {
			backoff = 100 * time.Millisecond
			if uerr := w.m.Update(defaults, per); uerr != nil {
				w.log.Error("dynamic broker config not applied; the previous config stays in force", zap.Error(uerr))
			}
			continue
		}
		w.log.Warn("re-reading dynamic broker configs failed; retrying", zap.Error(err))
		t := time.NewTimer(backoff)
		select {
		case <-w.stop:
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, 5*time.Second)
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}
