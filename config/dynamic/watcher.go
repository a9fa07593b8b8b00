package dynamic

import (
	"go.uber.org/zap"

	"gregor/config"
	"gregor/replication/metastore"
	"gregor/replication/rereader"
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

	rr *rereader.Rereader[struct{}] // one key: both layers are re-read together
}

// Watch starts the watcher goroutine over m (already Loaded); Close stops it.
func Watch(store metastore.Store, m *Manager, log *zap.Logger) *Watcher {
	if log == nil {
		log = zap.NewNop()
	}
	w := &Watcher{store: store, m: m, log: log}
	w.rr = rereader.Start(func(struct{}) error { return w.reread() }, func(_ struct{}, err error) {
		w.log.Warn("re-reading dynamic broker configs failed; retrying", zap.Error(err))
	})
	return w
}

// Changed schedules a re-read when entity is this broker's id or
// <default> (other brokers' entities are ignored, as Kafka's
// BrokerConfigHandler does). It never blocks.
func (w *Watcher) Changed(entity string) {
	if entity != config.DefaultEntity && entity != w.m.BrokerID() {
		return
	}
	w.rr.Changed(struct{}{})
}

// Close stops the goroutine and waits for it. Idempotent.
func (w *Watcher) Close() { w.rr.Close() }

// reread loads both layers and applies them; only a failed read is an
// error (retried): an update the components refuse is logged and skipped.
func (w *Watcher) reread() error {
	defaults, _, err := Read(w.store, config.DefaultEntity)
	if err != nil {
		return err
	}
	per, _, err := Read(w.store, w.m.BrokerID())
	if err != nil {
		return err
	}
	if uerr := w.m.Update(defaults, per); uerr != nil {
		w.log.Error("dynamic broker config not applied; the previous config stays in force", zap.Error(uerr))
	}
	return nil
}
