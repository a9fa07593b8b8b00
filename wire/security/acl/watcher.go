package acl

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"gregor/replication/metastore"
)

// Watcher keeps an Authorizer's snapshot current from the change
// notifications under LiteralChangesPath and ExtendedChangesPath, as
// every Kafka broker's ZkNodeChangeNotificationListener does: each new
// acl_changes_<seq> node names a resource whose ACLs it re-reads.
// Notifications older than ChangeExpiration (since this broker first saw
// them) are deleted, as Kafka purges them. It owns one goroutine, started
// by StartWatcher and ended by Stop.
type Watcher struct {
	store metastore.Store
	auth  *Authorizer
	log   *zap.Logger

	last      map[string]int64     // changes dir → last processed sequence number
	firstSeen map[string]time.Time // notification path → when first seen (for the purge)

	resync  chan struct{} // a session came back: reload everything
	stop    chan struct{}
	done    chan struct{}
	unwatch func()
}

// ChangeExpiration is how long a change notification stays before a
// broker deletes it (ZkNodeChangeNotificationListener's changeExpirationMs).
const ChangeExpiration = 15 * time.Minute

// pollInterval re-reads the notification directories even without a
// watch event, so a missed event delays a change by at most this long.
const pollInterval = 30 * time.Second

// StartWatcher creates the ACL paths (EnsurePaths), loads every ACL into
// a's snapshot and starts watching the notifications. It returns once the
// first load is done, so the authorizer never answers from an empty
// cache. Errors: the store's (nothing is started then).
func StartWatcher(s metastore.Store, a *Authorizer, log *zap.Logger) (*Watcher, error) {
	if log == nil {
		log = zap.NewNop()
	}
	w := &Watcher{store: s, auth: a, log: log, last: map[string]int64{LiteralChangesPath: -1, ExtendedChangesPath: -1}, firstSeen: map[string]time.Time{},
		resync: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if err := EnsurePaths(s); err != nil {
		return nil, err
	}
	if err := w.reload(); err != nil {
		return nil, err
	}
	w.unwatch = s.OnSession(func(ev metastore.SessionEvent) {
		if ev.State == metastore.SessionEstablished {
			select {
			case w.resync <- struct{}{}:
			default:
			}
		}
	})
	go w.run()
	return w, nil
}

// Stop ends the watcher's goroutine and waits for it.
func (w *Watcher) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	w.unwatch()
}

// reload reads the current notification numbers, then every ACL: any
// change after that shows up as a newer notification.
func (w *Watcher) reload() error {
	for _, dir := range []string{LiteralChangesPath, ExtendedChangesPath} {
		kids, err := children(w.store, dir)
		if err != nil {
			return err
		}
		w.last[dir] = maxSeq(kids, w.last[dir])
	}
	n, err := w.auth.Load(w.store)
	if err != nil {
		return err
	}
	w.log.Info("loaded ACLs", zap.Int("resources", n))
	return nil
}

func maxSeq(kids []string, from int64) int64 {
	for _, k := range kids {
		if n, ok := changeSeq(k); ok && n > from {
			from = n
		}
	}
	return from
}

func changeSeq(name string) (int64, bool) {
	if !strings.HasPrefix(name, ChangePrefix) {
		return 0, false
	}
	n, err := strconv.ParseInt(name[len(ChangePrefix):], 10, 64)
	return n, err == nil
}

func (w *Watcher) run() {
	defer close(w.done)
	poll := time.NewTicker(pollInterval)
	defer poll.Stop()
	backoff := time.Duration(0)
	needReload := false
	for {
		if backoff > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-w.stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		if needReload {
			if err := w.reload(); err != nil {
				w.log.Warn("reloading ACLs", zap.Error(err))
				backoff = nextBackoff(backoff)
				continue
			}
			needReload = false
		}
		lit, err1 := w.process(LiteralChangesPath)
		ext, err2 := w.process(ExtendedChangesPath)
		if err := errors.Join(err1, err2); err != nil {
			w.log.Warn("processing ACL change notifications", zap.Error(err))
			backoff = nextBackoff(backoff)
			needReload = errors.Is(err, metastore.ErrSessionExpired) || errors.Is(err, metastore.ErrClosed)
			if errors.Is(err, metastore.ErrClosed) {
				return
			}
			continue
		}
		backoff = 0
		select {
		case <-w.stop:
			return
		case ev := <-lit:
			needReload = ev.Type == metastore.EventNotWatching
		case ev := <-ext:
			needReload = ev.Type == metastore.EventNotWatching
		case <-w.resync:
			needReload = true
		case <-poll.C:
		}
		if needReload {
			backoff = 100 * time.Millisecond // a lost session: let it come back
		}
	}
}

func nextBackoff(d time.Duration) time.Duration {
	if d < 100*time.Millisecond {
		return 100 * time.Millisecond
	}
	if d *= 2; d > 5*time.Second {
		d = 5 * time.Second
	}
	return d
}

// process arms a watch on dir, applies every notification newer than the
// last processed one, and purges expired ones.
func (w *Watcher) process(dir string) (<-chan metastore.Event, error) {
	kids, ch, err := w.store.ChildrenW(dir)
	if errors.Is(err, metastore.ErrNoNode) {
		if err = metastore.EnsurePath(w.store, dir); err == nil {
			kids, ch, err = w.store.ChildrenW(dir)
		}
	}
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, k := range kids { // sorted; equal-width sequence numbers sort numerically
		n, ok := changeSeq(k)
		if !ok {
			continue
		}
		path := dir + "/" + k
		if n > w.last[dir] {
			if err := w.apply(dir, path); err != nil {
				return ch, err
			}
			w.last[dir] = n
		}
		first, seen := w.firstSeen[path]
		if !seen {
			w.firstSeen[path] = now
		} else if now.Sub(first) > ChangeExpiration {
			if err := w.store.Delete(path, metastore.AnyVersion); err != nil && !errors.Is(err, metastore.ErrNoNode) {
				return ch, err
			}
			delete(w.firstSeen, path)
		}
	}
	for p := range w.firstSeen { // forget nodes someone else purged
		if strings.HasPrefix(p, dir+"/") && !containsName(kids, p[len(dir)+1:]) {
			delete(w.firstSeen, p)
		}
	}
	return ch, nil
}

func containsName(sorted []string, n string) bool {
	for _, k := range sorted {
		if k == n {
			return true
		}
	}
	return false
}

// apply re-reads the resource one notification names and puts its
// entries in the snapshot. A notification that does not decode is
// logged and skipped, as Kafka does; store errors are returned.
func (w *Watcher) apply(dir, path string) error {
	data, _, err := w.store.Get(path)
	if errors.Is(err, metastore.ErrNoNode) {
		return nil // purged already; a later one or the reload covers it
	}
	if err != nil {
		return err
	}
	r, err := DecodeChange(dir, data)
	if err != nil {
		w.log.Error("error processing ACL change notification", zap.String("path", path), zap.ByteString("data", data), zap.Error(err))
		return nil
	}
	v, err := w.auth.Refresh(w.store, r)
	if err != nil {
		if errors.Is(err, ErrMalformed) {
			w.log.Error("ACL node does not decode; keeping the previous ACLs", zap.String("resource", r.String()), zap.Error(err))
			return nil
		}
		return err
	}
	w.log.Info("processing ACL change notification", zap.String("resource", r.String()), zap.Int("acls", len(v.Entries)), zap.Int32("version", v.Version))
	return nil
}
