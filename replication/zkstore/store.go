// Package zkstore is the metastore.Store of a ZooKeeper-coordinated
// cluster (zookeeper.connect set): a go-zookeeper session to the ensemble,
// paths under the optional chroot, ZooKeeper's errors mapped to the
// metastore sentinels, one-shot watches relayed as metastore events, and
// session changes (expiry, new session) published through OnSession so
// the owners of ephemeral nodes and watches re-create them.
package zkstore

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"gregor/replication/metastore"
)

// Config is what Open needs beyond the connect string.
type Config struct {
	// SessionTimeout is zookeeper.session.timeout.ms (Kafka default 18 s);
	// the server clamps it to [2, 20] × its tickTime.
	SessionTimeout time.Duration
	// ConnectionTimeout is zookeeper.connection.timeout.ms: how long Open
	// waits for the first session (default SessionTimeout).
	ConnectionTimeout time.Duration
	// Logger receives go-zookeeper's connection messages (default: none).
	Logger *zap.Logger
}

// Store is a metastore.Store over one ZooKeeper session. It is safe for
// concurrent use. The session is re-established automatically after an
// expiry (with a new session id); see OnSession.
type Store struct {
	conn    *zk.Conn
	servers []string
	chroot  string // "" or "/kafka": prefixed to every path
	log     *zap.Logger

	closed  atomic.Bool
	closing chan struct{} // closed by Close: the watch relays stop
	wg      sync.WaitGroup

	// Session tracking, updated from go-zookeeper's event callback.
	sessMu      sync.Mutex
	ready       chan struct{} // closed on the first StateHasSession
	readyOnce   sync.Once
	hadSession  bool
	expired     bool // StateExpired seen since the last StateHasSession
	lastSession int64
	events      *metastore.SessionEvents // OnSession delivery
}

// Open connects to the ensemble named by connect
// ("host:port[,host:port…][/chroot]"), waits up to cfg.ConnectionTimeout
// for a session, and creates the chroot when it is missing (as Kafka's
// broker does). Errors: ErrBadConnect; a timeout naming the servers.
func Open(connect string, cfg Config) (*Store, error) {
	servers, chroot, err := ParseConnect(connect)
	if err != nil {
		return nil, err
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 18 * time.Second
	}
	if cfg.ConnectionTimeout <= 0 {
		cfg.ConnectionTimeout = cfg.SessionTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	s := &Store{
		servers: servers,
		chroot:  chroot,
		log:     cfg.Logger,
		closing: make(chan struct{}),
		ready:   make(chan struct{}),
		events:  metastore.NewSessionEvents(),
	}
	conn, _, err := zk.Connect(servers, cfg.SessionTimeout,
		zk.WithLogger(zkLogger{cfg.Logger.Sugar()}),
		zk.WithLogInfo(false),
		// The callback sees every event, in order; the event channel that
		// Connect also returns drops events once its 6 slots are full, so
		// it is not read (a full channel only makes sendEvent skip it).
		zk.WithEventCallback(s.onEvent))
	if err != nil {
		s.events.Close()
		return nil, fmt.Errorf("zkstore: connect %s: %w", strings.Join(servers, ","), err)
	}
	s.sessMu.Lock() // onEvent may already be running
	s.conn = conn
	s.sessMu.Unlock()

	select {
	case <-s.ready:
		// The first session's event can come before s.conn was set
		// (onEvent then recorded id 0): take its id now, or a
		// Disconnected would name session 0x0.
		s.sessMu.Lock()
		if s.lastSession == 0 {
			s.lastSession = conn.SessionID()
		}
		s.sessMu.Unlock()
	case <-time.After(cfg.ConnectionTimeout):
		state := conn.State()
		s.Close()
		return nil, fmt.Errorf("zkstore: timed out after %v waiting for a session with %s (state %v)",
			cfg.ConnectionTimeout, strings.Join(servers, ","), state)
	}
	if chroot != "" {
		if err := s.ensureChroot(); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// ensureChroot creates the chroot's components outside the chroot.
func (s *Store) ensureChroot() error {
	cur := ""
	for _, c := range strings.Split(s.chroot[1:], "/") {
		cur += "/" + c
		_, err := s.conn.Create(cur, nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("zkstore: create chroot %s: %w", s.chroot, mapErr(err))
		}
	}
	return nil
}

// Chroot is the chroot ("" for none).
func (s *Store) Chroot() string { return s.chroot }

// Servers are the ensemble's "host:port" addresses.
func (s *Store) Servers() []string { return append([]string(nil), s.servers...) }

// SessionID is the current ZooKeeper session id (0 while there is none).
func (s *Store) SessionID() int64 { return s.conn.SessionID() }

// full maps a store path to the ensemble's path under the chroot.
func (s *Store) full(p string) (string, error) {
	if err := metastore.ValidatePath(p); err != nil {
		return "", err
	}
	if s.chroot == "" {
		return p, nil
	}
	if p == "/" {
		return s.chroot, nil
	}
	return s.chroot + p, nil
}

// rel maps an ensemble path back under the chroot.
func (s *Store) rel(p string) string {
	if s.chroot == "" {
		return p
	}
	if p == s.chroot {
		return "/"
	}
	return strings.TrimPrefix(p, s.chroot)
}

func (s *Store) open() error {
	if s.closed.Load() {
		return metastore.ErrClosed
	}
	return nil
}

var acl = zk.WorldACL(zk.PermAll)

func flags(ephemeral, sequential bool) int32 {
	var f int32
	if ephemeral {
		f |= zk.FlagEphemeral
	}
	if sequential {
		f |= zk.FlagSequence
	}
	return f
}

// Create implements metastore.Store.
func (s *Store) Create(p string, data []byte, ephemeral bool) error {
	if err := s.open(); err != nil {
		return err
	}
	fp, err := s.full(p)
	if err != nil {
		return err
	}
	if p == "/" {
		return metastore.ErrNodeExists
	}
	_, err = s.conn.Create(fp, data, flags(ephemeral, false), acl)
	return mapErr(err)
}

// CreateSequential implements metastore.Store.
func (s *Store) CreateSequential(prefix string, data []byte, ephemeral bool) (string, error) {
	if err := s.open(); err != nil {
		return "", err
	}
	fp, err := s.full(prefix)
	if err != nil {
		return "", err
	}
	got, err := s.conn.Create(fp, data, flags(ephemeral, true), acl)
	if err != nil {
		return "", mapErr(err)
	}
	return s.rel(got), nil
}

// Get implements metastore.Store.
func (s *Store) Get(p string) ([]byte, int32, error) {
	if err := s.open(); err != nil {
		return nil, 0, err
	}
	fp, err := s.full(p)
	if err != nil {
		return nil, 0, err
	}
	data, st, err := s.conn.Get(fp)
	if err != nil {
		return nil, 0, mapErr(err)
	}
	return data, st.Version, nil
}

// GetW implements metastore.Store.
func (s *Store) GetW(p string) ([]byte, int32, <-chan metastore.Event, error) {
	if err := s.open(); err != nil {
		return nil, 0, nil, err
	}
	fp, err := s.full(p)
	if err != nil {
		return nil, 0, nil, err
	}
	data, st, ch, err := s.conn.GetW(fp)
	if err != nil {
		return nil, 0, nil, mapErr(err)
	}
	return data, st.Version, s.relay(p, ch), nil
}

// Set implements metastore.Store.
func (s *Store) Set(p string, data []byte, version int32) (int32, error) {
	if err := s.open(); err != nil {
		return 0, err
	}
	fp, err := s.full(p)
	if err != nil {
		return 0, err
	}
	st, err := s.conn.Set(fp, data, version)
	if err != nil {
		return 0, mapErr(err)
	}
	return st.Version, nil
}

// Delete implements metastore.Store.
func (s *Store) Delete(p string, version int32) error {
	if err := s.open(); err != nil {
		return err
	}
	if p == "/" {
		return metastore.ErrInvalidPath
	}
	fp, err := s.full(p)
	if err != nil {
		return err
	}
	return mapErr(s.conn.Delete(fp, version))
}

// Children implements metastore.Store; names are sorted.
func (s *Store) Children(p string) ([]string, error) {
	if err := s.open(); err != nil {
		return nil, err
	}
	fp, err := s.full(p)
	if err != nil {
		return nil, err
	}
	kids, _, err := s.conn.Children(fp)
	if err != nil {
		return nil, mapErr(err)
	}
	return sortNames(kids), nil
}

// ChildrenW implements metastore.Store.
func (s *Store) ChildrenW(p string) ([]string, <-chan metastore.Event, error) {
	if err := s.open(); err != nil {
		return nil, nil, err
	}
	fp, err := s.full(p)
	if err != nil {
		return nil, nil, err
	}
	kids, _, ch, err := s.conn.ChildrenW(fp)
	if err != nil {
		return nil, nil, mapErr(err)
	}
	return sortNames(kids), s.relay(p, ch), nil
}

// Exists implements metastore.Store.
func (s *Store) Exists(p string) (bool, error) {
	if err := s.open(); err != nil {
		return false, err
	}
	fp, err := s.full(p)
	if err != nil {
		return false, err
	}
	ok, _, err := s.conn.Exists(fp)
	return ok, mapErr(err)
}

// ExistsW implements metastore.Store.
func (s *Store) ExistsW(p string) (bool, <-chan metastore.Event, error) {
	if err := s.open(); err != nil {
		return false, nil, err
	}
	fp, err := s.full(p)
	if err != nil {
		return false, nil, err
	}
	ok, _, ch, err := s.conn.ExistsW(fp)
	if err != nil {
		return false, nil, mapErr(err)
	}
	return ok, s.relay(p, ch), nil
}

// Multi implements metastore.Store with ZooKeeper's multi: atomic on the
// server, so a CheckVersionOp on /controller_epoch fences the writes after it.
func (s *Store) Multi(ops ...metastore.Op) ([]metastore.OpResult, error) {
	if err := s.open(); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, nil
	}
	reqs := make([]any, len(ops))
	for i, op := range ops {
		if op == nil {
			return nil, &metastore.MultiError{Index: i, Err: fmt.Errorf("%w: nil op", metastore.ErrInvalidPath)}
		}
		p := metastoreOpPath(op)
		fp, err := s.full(p)
		if err == nil && p == "/" {
			if _, isCheck := op.(*metastore.CheckVersionOp); !isCheck {
				err = metastore.ErrInvalidPath
			}
		}
		if err != nil {
			return nil, &metastore.MultiError{Index: i, Path: p, Err: err}
		}
		switch o := op.(type) {
		case *metastore.CheckVersionOp:
			reqs[i] = &zk.CheckVersionRequest{Path: fp, Version: o.Version}
		case *metastore.CreateOp:
			reqs[i] = &zk.CreateRequest{Path: fp, Data: o.Data, Acl: acl, Flags: flags(o.Ephemeral, false)}
		case *metastore.SetOp:
			reqs[i] = &zk.SetDataRequest{Path: fp, Data: o.Data, Version: o.Version}
		case *metastore.DeleteOp:
			reqs[i] = &zk.DeleteRequest{Path: fp, Version: o.Version}
		default:
			return nil, &metastore.MultiError{Index: i, Path: p, Err: fmt.Errorf("%w: unknown op %T", metastore.ErrInvalidPath, op)}
		}
	}
	res, err := s.conn.Multi(reqs...)
	// A failed transaction names its failing op; the ops after it report
	// ZooKeeper's "runtime inconsistency" and the ones before it "ok".
	for i, r := range res {
		if r.Error != nil && !isRuntimeInconsistency(r.Error) {
			return nil, &metastore.MultiError{Index: i, Path: metastoreOpPath(ops[i]), Err: mapErr(r.Error)}
		}
	}
	if err != nil {
		return nil, mapErr(err)
	}
	if len(res) != len(ops) {
		return nil, fmt.Errorf("zkstore: multi returned %d results for %d ops", len(res), len(ops))
	}
	out := make([]metastore.OpResult, len(ops))
	for i, op := range ops {
		out[i].Path = metastoreOpPath(op)
		switch o := op.(type) {
		case *metastore.CheckVersionOp:
			out[i].Version = o.Version
		case *metastore.CreateOp:
			if res[i].String != "" {
				out[i].Path = s.rel(res[i].String)
			}
		case *metastore.SetOp:
			if res[i].Stat != nil {
				out[i].Version = res[i].Stat.Version
			}
		}
	}
	return out, nil
}

// metastoreOpPath reads an op's path through the exported fields (the
// interface's accessor is unexported).
func metastoreOpPath(op metastore.Op) string {
	switch o := op.(type) {
	case *metastore.CheckVersionOp:
		return o.Path
	case *metastore.CreateOp:
		return o.Path
	case *metastore.SetOp:
		return o.Path
	case *metastore.DeleteOp:
		return o.Path
	}
	return ""
}

// Close implements metastore.Store: the session is closed (ZooKeeper
// deletes its ephemeral nodes at once), pending watches receive
// EventNotWatching, and the store's goroutines have ended when it returns.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.closing)
	if s.conn != nil {
		s.conn.Close()
	}
	s.wg.Wait()
	s.events.Close()
	return nil
}

var _ metastore.Store = (*Store)(nil)

func sortNames(kids []string) []string {
	// ZooKeeper returns children in no particular order; the contract
	// promises sorted names.
	out := append([]string(nil), kids...)
	sortStrings(out)
	return out
}

// zkLogger adapts zap to go-zookeeper's Printf logger.
type zkLogger struct{ s *zap.SugaredLogger }

func (l zkLogger) Printf(format string, args ...any) { l.s.Infof("zookeeper: "+format, args...) }
