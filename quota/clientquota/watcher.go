package clientquota

import (
	"go.uber.org/zap"

	"gregor/replication/metastore"
	"gregor/replication/rereader"
)

// Watcher keeps a Manager's quotas current with the store: Start loads
// every entity, then each Changed(entity path) — called by the
// /config/changes listener for a "users/…" or "clients/…" notification,
// on the controller's goroutine — re-reads that entity on the watcher's
// own goroutine, so the caller never waits on the store. A failed read is
// retried with a bounded backoff until it succeeds or the watcher closes.
type Watcher struct {
	store metastore.Store
	m     *Manager
	log   *zap.Logger

	rr *rereader.Rereader[Entity]
}

// StartWatcher loads every entity's quotas into m and starts the
// goroutine; Close stops it. Errors: the initial load failed (nothing is
// started).
func StartWatcher(store metastore.Store, m *Manager, log *zap.Logger) (*Watcher, error) {
	if log == nil {
		log = zap.NewNop()
	}
	w := &Watcher{store: store, m: m, log: log}
	ents, err := List(store)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if err := w.load(e); err != nil {
			return nil, err
		}
	}
	log.Info("client quotas loaded", zap.Int("entities", len(m.Quotas())))
	w.rr = rereader.Start(w.load, func(e Entity, err error) {
		w.log.Warn("re-reading client quotas failed; retrying", zap.String("entity", e.Path()), zap.Error(err))
	})
	return w, nil
}

// Changed schedules a re-read of the entity at a notification's entity
// path; a path that names no quota entity is ignored. It never blocks.
func (w *Watcher) Changed(entityPath string) {
	e, ok := ParsePath(entityPath)
	if !ok {
		return
	}
	w.rr.Changed(e)
}

// Close stops the goroutine and waits for it. Idempotent.
func (w *Watcher) Close() { w.rr.Close() }

func (w *Watcher) load(e Entity) error {
	cfg, _, err := Read(w.store, e)
	if err != nil {
		return err
	}
	vals, bad := Values(cfg)
	for k, v := range bad {
		w.log.Warn("ignoring a quota value that is not a number", zap.String("entity", e.Path()), zap.String("key", k), zap.String("value", v))
	}
	w.m.Set(e, vals)
	if len(vals) > 0 {
		w.log.Info("client quotas updated", zap.String("entity", e.Path()), zap.Any("quotas", vals))
	}
	return nil
}
