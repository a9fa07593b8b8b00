package usercreds

import (
	"go.uber.org/zap"

	"gregor/replication/metastore"
	"gregor/replication/rereader"
	"gregor/wire/security/sasl"
)

// Watcher keeps a credential cache current: Start loads every user, then
// each Changed(user) — called by the /config/changes listener for a
// "users/<u>" notification — re-reads that user on the watcher's own
// goroutine, so the caller never waits on the store. A read that fails is
// retried (bounded backoff) until it succeeds or the watcher closes.
type Watcher struct {
	store metastore.Store
	cache *sasl.CredentialCache
	log   *zap.Logger

	rr *rereader.Rereader[string] // sanitized user names to re-read
}

// Start loads /config/users into cache and starts the watcher goroutine;
// Close stops it. Errors: the initial load failed (nothing is started).
func Start(store metastore.Store, cache *sasl.CredentialCache, log *zap.Logger) (*Watcher, error) {
	if log == nil {
		log = zap.NewNop()
	}
	w := &Watcher{store: store, cache: cache, log: log}
	users, err := ListUsers(store)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		if err := w.load(u); err != nil {
			return nil, err
		}
	}
	log.Info("SCRAM credentials loaded", zap.Int("users", cache.Users()))
	w.rr = rereader.Start(func(s string) error {
		name, err := Desanitize(s)
		if err == nil {
			err = w.load(name)
		}
		return err
	}, func(s string, err error) {
		w.log.Warn("re-reading SCRAM credentials failed; retrying", zap.String("user", s), zap.Error(err))
	})
	return w, nil
}

// Changed schedules a re-read of user (its sanitized znode name, as in
// the notification's entity path). It never blocks.
func (w *Watcher) Changed(sanitized string) { w.rr.Changed(sanitized) }

// Close stops the goroutine and waits for it. Idempotent.
func (w *Watcher) Close() { w.rr.Close() }

// load reads one user into the cache (a user without a znode or without
// SCRAM credentials is removed from it).
func (w *Watcher) load(name string) error {
	cfg, _, err := ReadConfig(w.store, name)
	if err != nil {
		return err
	}
	creds, bad := Credentials(cfg)
	for m, err := range bad {
		w.log.Warn("ignoring a SCRAM credential that does not parse", zap.String("user", name), zap.String("mechanism", m), zap.Error(err))
	}
	w.cache.SetUser(name, creds)
	w.log.Debug("SCRAM credentials updated", zap.String("user", name), zap.Int("mechanisms", len(creds)))
	return nil
}
