package metastore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Embedded is the in-process Store of the zero-config single-node mode.
//
// # Files
//
// In the first online log dir (names start with "__", so the log manager
// never takes them for "<topic>-<partition>" directories, and it skips
// plain files anyway):
//
//	__gregor_metadata.db             the store: a bbolt database (go.etcd.io/bbolt), layout below
//	__gregor_metadata.json           the JSON snapshot older Gregor versions kept; read once
//	                                 and converted into the database (embedded_migrate.go)
//	__gregor_metadata.json.migrated  that snapshot after the conversion: a backup, never read again
//	__gregor_metadata.db.migrating   a conversion in progress; a crash may leave it, the next
//	                                 open deletes it and converts again
//
// # Database layout (layout 1)
//
// Bucket "nodes": one key per persistent node, its path ("/" included, for
// its sequential counter); the value is the data version (4 bytes, big
// endian), the sequential-child counter (4 bytes, big endian), then the
// data. Bucket "meta": key "layout" = "1".
//
// # Memory, disk and durability
//
// The whole tree also lives in memory: reads, watches and ephemeral nodes
// never touch the disk. A write is queued for one committer goroutine
// (embedded_commit.go) that takes every queued write at once, checks and
// applies each to the tree in order, writes the nodes they changed (and
// only those: O(size of the change)) in one bbolt transaction, which
// fsyncs, then fires their watches and answers them. Concurrent writers
// thus share a commit, and each returns only once its change is durable:
// a kill -9 at any point loses no acknowledged change. The tree's lock is
// held from apply to fsync, so no reader ever sees a change that is not
// yet on disk. A commit that fails (an I/O error) is undone in memory and
// every write in it fails with that error; as with ZooKeeper's
// CONNECTIONLOSS, a change so failed may still be found after a reopen if
// the disk took the commit's last page.
//
// Ephemeral nodes are never written: they belong to this handle, as they
// belong to a session in ZooKeeper, and are gone after a reopen or a crash.
type Embedded struct {
	file string
	db   *bolt.DB
	// migratedFrom is the JSON snapshot converted by this open ("" if none).
	migratedFrom string

	mu     sync.Mutex
	closed bool
	nodes  map[string]*node
	// watches by path; each channel is buffered 1, fired once, then closed.
	dataW  map[string][]chan Event // GetW and ExistsW
	childW map[string][]chan Event // ChildrenW
	// failCommit, when set (tests only), fails the next commits after the
	// nodes are written and before the transaction commits.
	failCommit func() error

	committer
}

type node struct {
	data      []byte
	version   int32
	ephemeral bool
	owner     int64 // the session that owns an ephemeral node (Memory only; 0 in Embedded)
	cseq      int32 // sequential-child counter (ZooKeeper's cversion role)
	children  map[string]struct{}
}

// File names of the embedded store in its log dir (see Embedded).
const (
	// DBFileName is the bbolt database: <log.dir>/__gregor_metadata.db.
	DBFileName = "__gregor_metadata.db"
	// SnapshotFileName is the JSON snapshot of older versions, converted
	// into DBFileName on the first open and then renamed to
	// SnapshotFileName + MigratedSuffix.
	SnapshotFileName = "__gregor_metadata.json"
	// MigratedSuffix marks a converted snapshot, kept as a backup.
	MigratedSuffix = ".migrated"
	// migratingSuffix marks a conversion in progress (DBFileName + it).
	migratingSuffix = ".migrating"
)

// lockTimeout bounds the wait for the database's file lock, which another
// process (a second broker on the same log dir) may hold.
const lockTimeout = 5 * time.Second

// OpenEmbeddedDir opens (or creates) the embedded store in logDir, i.e. the
// database <logDir>/__gregor_metadata.db. When only the JSON snapshot of an
// older version (<logDir>/__gregor_metadata.json) is there, it is
// converted first, crash-safely (MigratedFrom tells). logDir must exist.
func OpenEmbeddedDir(logDir string) (*Embedded, error) {
	dbFile := filepath.Join(logDir, DBFileName)
	snap := filepath.Join(logDir, SnapshotFileName)
	migrated, err := migrateSnapshot(snap, dbFile)
	if err != nil {
		return nil, err
	}
	e, err := OpenEmbedded(dbFile)
	if err != nil {
		return nil, err
	}
	if migrated {
		e.migratedFrom = snap
	}
	return e, nil
}

// OpenEmbedded opens the embedded store's bbolt database file, creating an
// empty tree when the file does not exist (its directory must). A file
// that is not such a database, or whose nodes lack parents, returns an
// error wrapping ErrCorrupt; a file locked by another process for
// longer than 5 s returns an error saying so.
func OpenEmbedded(file string) (*Embedded, error) {
	_, statErr := os.Stat(file)
	fresh := errors.Is(statErr, os.ErrNotExist)
	db, err := bolt.Open(file, 0o644, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		return nil, openError(file, err)
	}
	if fresh {
		// The new file's directory entry must survive a power loss too.
		if err := syncDir(filepath.Dir(file)); err != nil {
			db.Close()
			return nil, err
		}
	}
	nodes, err := loadNodes(db, file)
	if err != nil {
		db.Close()
		return nil, err
	}
	e := &Embedded{
		file:   file,
		db:     db,
		nodes:  nodes,
		dataW:  map[string][]chan Event{},
		childW: map[string][]chan Event{},
	}
	e.startCommitter()
	return e, nil
}

// openError names what went wrong opening a bbolt file.
func openError(file string, err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("metastore: %s is locked by another process (another broker on this log dir?) after %v", file, lockTimeout)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, file, err)
	}
	return fmt.Errorf("metastore: open %s: %w", file, err)
}

// File is the database file's path.
func (e *Embedded) File() string { return e.file }

// MigratedFrom is the path of the JSON snapshot that this open converted
// into the database, or "" when there was none.
func (e *Embedded) MigratedFrom() string { return e.migratedFrom }

// check validates the path and the handle; e.mu is held.
func (e *Embedded) check(p string) error {
	if e.closed {
		return ErrClosed
	}
	return ValidatePath(p)
}

// Get implements Store.
func (e *Embedded) Get(p string) ([]byte, int32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(p); err != nil {
		return nil, 0, err
	}
	n, ok := e.nodes[p]
	if !ok {
		return nil, 0, ErrNoNode
	}
	return clone(n.data), n.version, nil
}

// GetW implements Store.
func (e *Embedded) GetW(p string) ([]byte, int32, <-chan Event, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(p); err != nil {
		return nil, 0, nil, err
	}
	n, ok := e.nodes[p]
	if !ok {
		return nil, 0, nil, ErrNoNode
	}
	return clone(n.data), n.version, e.watch(e.dataW, p), nil
}

// Children implements Store.
func (e *Embedded) Children(p string) ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(p); err != nil {
		return nil, err
	}
	n, ok := e.nodes[p]
	if !ok {
		return nil, ErrNoNode
	}
	return sortedKeys(n.children), nil
}

// ChildrenW implements Store.
func (e *Embedded) ChildrenW(p string) ([]string, <-chan Event, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(p); err != nil {
		return nil, nil, err
	}
	n, ok := e.nodes[p]
	if !ok {
		return nil, nil, ErrNoNode
	}
	return sortedKeys(n.children), e.watch(e.childW, p), nil
}

// Exists implements Store.
func (e *Embedded) Exists(p string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(p); err != nil {
		return false, err
	}
	_, ok := e.nodes[p]
	return ok, nil
}

// ExistsW implements Store.
func (e *Embedded) ExistsW(p string) (bool, <-chan Event, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(p); err != nil {
		return false, nil, err
	}
	_, ok := e.nodes[p]
	return ok, e.watch(e.dataW, p), nil
}

// Close implements Store: ephemeral nodes are dropped (their watches fire
// as deletions first), then every pending watch gets EventNotWatching;
// writes still queued fail with ErrClosed, and the database is closed.
func (e *Embedded) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	// Deepest first so parents are childless when removed (ephemerals have
	// no children, but keep the order general).
	var eph []string
	for p, n := range e.nodes {
		if n.ephemeral {
			eph = append(eph, p)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(eph)))
	for _, p := range eph {
		delete(e.nodes, p)
		delete(e.nodes[Parent(p)].children, Base(p))
		e.fireDeleted(p)
	}
	e.closed = true
	for _, m := range []map[string][]chan Event{e.dataW, e.childW} {
		for p := range m {
			e.fire(m, p, EventNotWatching)
		}
	}
	e.mu.Unlock()
	e.stopCommitter()
	if err := e.db.Close(); err != nil {
		return fmt.Errorf("metastore: close %s: %w", e.file, err)
	}
	return nil
}

func (e *Embedded) watch(m map[string][]chan Event, p string) <-chan Event {
	ch := make(chan Event, 1)
	m[p] = append(m[p], ch)
	return ch
}

// fire delivers ev to every watch on p and forgets them (one-shot).
func (e *Embedded) fire(m map[string][]chan Event, p string, t EventType) {
	for _, ch := range m[p] {
		ch <- Event{Type: t, Path: p} // buffered 1 and fired once: never blocks
		close(ch)
	}
	delete(m, p)
}

func (e *Embedded) fireDeleted(p string) {
	e.fire(e.dataW, p, EventNodeDeleted)
	e.fire(e.childW, p, EventNodeDeleted)
	e.fire(e.childW, Parent(p), EventNodeChildrenChanged)
}

// syncDir fsyncs a directory so that a file created or renamed in it
// survives a power loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("metastore: open dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("metastore: fsync dir %s: %w", dir, err)
	}
	return nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func sortedKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var _ Store = (*Embedded)(nil)

// Dump renders the persistent and ephemeral tree for debugging, one
// "path (vN) data" line per node, sorted.
func (e *Embedded) Dump() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return dumpNodes(e.nodes)
}

// dumpNodes renders nodes one "path (vN[ ephemeral[ 0xOWNER]]) data" line
// per node, sorted by path (the owner only for Memory's sessions).
func dumpNodes(nodes map[string]*node) string {
	paths := make([]string, 0, len(nodes))
	for p := range nodes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		n := nodes[p]
		kind := ""
		switch {
		case n.ephemeral && n.owner != 0:
			kind = fmt.Sprintf(" ephemeral 0x%x", n.owner)
		case n.ephemeral:
			kind = " ephemeral"
		}
		fmt.Fprintf(&b, "%s (v%d%s) %s\n", p, n.version, kind, n.data)
	}
	return b.String()
}
