package metastore

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// SnapshotFileName is the embedded store's file under the first log dir:
// <log.dir>/__gregor_metadata.json. The name starts with "__" so the log
// manager never mistakes it for a "<topic>-<partition>" directory.
const SnapshotFileName = "__gregor_metadata.json"

// snapshotFormat is the version of the JSON snapshot layout.
const snapshotFormat = 1

// Embedded is the in-process Store of the zero-config single-node mode. The
// tree lives in memory; every change to a persistent node rewrites one JSON
// snapshot file atomically (temp file, fsync, rename, fsync of the
// directory) before the call returns, so an acknowledged change survives a
// crash. Ephemeral nodes are never written: they belong to this handle, as
// they belong to a session in ZooKeeper, and are gone after a reopen.
//
// Snapshot layout (snapshot format 1):
//
//	{"format":1,"nodes":{"/brokers/topics/t":{"data":"{…}","version":0,"cseq":0},…}}
//
// "data" holds the node data when it is valid UTF-8, otherwise
// "data_base64" holds it base64-encoded. The root "/" is implicit.
type Embedded struct {
	file string

	mu     sync.Mutex
	closed bool
	nodes  map[string]*node
	// watches by path; each channel is buffered 1, fired once, then closed.
	dataW  map[string][]chan Event // GetW and ExistsW
	childW map[string][]chan Event // ChildrenW
}

type node struct {
	data      []byte
	version   int32
	ephemeral bool
	owner     int64 // the session that owns an ephemeral node (Memory only; 0 in Embedded)
	cseq      int32 // sequential-child counter (ZooKeeper's cversion role)
	children  map[string]struct{}
}

type fileNode struct {
	Data       *string `json:"data,omitempty"`
	DataBase64 *string `json:"data_base64,omitempty"`
	Version    int32   `json:"version"`
	CSeq       int32   `json:"cseq"`
}

type fileSnapshot struct {
	Format int                 `json:"format"`
	Nodes  map[string]fileNode `json:"nodes"`
}

// OpenEmbeddedDir opens (or creates) the embedded store in logDir, i.e. the
// file <logDir>/__gregor_metadata.json. logDir must exist.
func OpenEmbeddedDir(logDir string) (*Embedded, error) {
	return OpenEmbedded(filepath.Join(logDir, SnapshotFileName))
}

// OpenEmbedded opens the embedded store persisted in file, creating an
// empty tree when the file does not exist. A file that does not parse, or
// whose nodes lack parents, returns an error wrapping ErrCorrupt.
func OpenEmbedded(file string) (*Embedded, error) {
	e := &Embedded{
		file:   file,
		nodes:  map[string]*node{"/": {children: map[string]struct{}{}}},
		dataW:  map[string][]chan Event{},
		childW: map[string][]chan Event{},
	}
	raw, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return nil, fmt.Errorf("metastore: read %s: %w", file, err)
	}
	var snap fileSnapshot
	if err := json.Unmarshal(raw, &snap); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, file, err)
	}
	if snap.Format != snapshotFormat {
		return nil, fmt.Errorf("%w: %s: unknown format %d", ErrCorrupt, file, snap.Format)
	}
	paths := make([]string, 0, len(snap.Nodes))
	for p := range snap.Nodes {
		paths = append(paths, p)
	}
	// Parents sort before their children ("/a" < "/a/b").
	sort.Strings(paths)
	for _, p := range paths {
		fn := snap.Nodes[p]
		if p == "/" {
			e.nodes["/"].cseq = fn.CSeq
			continue
		}
		if err := ValidatePath(p); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, file, err)
		}
		parent, ok := e.nodes[Parent(p)]
		if !ok {
			return nil, fmt.Errorf("%w: %s: node %q has no parent", ErrCorrupt, file, p)
		}
		n := &node{version: fn.Version, cseq: fn.CSeq, children: map[string]struct{}{}}
		switch {
		case fn.Data != nil:
			n.data = []byte(*fn.Data)
		case fn.DataBase64 != nil:
			if n.data, err = base64.StdEncoding.DecodeString(*fn.DataBase64); err != nil {
				return nil, fmt.Errorf("%w: %s: node %q: %v", ErrCorrupt, file, p, err)
			}
		}
		e.nodes[p] = n
		parent.children[Base(p)] = struct{}{}
	}
	return e, nil
}

// File is the snapshot file's path.
func (e *Embedded) File() string { return e.file }

// lookup returns the node at p, validating the path and the handle.
func (e *Embedded) check(p string) error {
	if e.closed {
		return ErrClosed
	}
	return ValidatePath(p)
}

// Create implements Store.
func (e *Embedded) Create(p string, data []byte, ephemeral bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(p); err != nil {
		return err
	}
	return e.createLocked(p, data, ephemeral)
}

func (e *Embedded) createLocked(p string, data []byte, ephemeral bool) error {
	parent, err := createParent(e.nodes, p)
	if err != nil {
		return err
	}
	n := &node{data: clone(data), ephemeral: ephemeral, children: map[string]struct{}{}}
	e.nodes[p] = n
	parent.children[Base(p)] = struct{}{}
	if !ephemeral {
		if err := e.persistLocked(); err != nil {
			delete(e.nodes, p)
			delete(parent.children, Base(p))
			return err
		}
	}
	e.fire(e.dataW, p, EventNodeCreated)
	e.fire(e.childW, Parent(p), EventNodeChildrenChanged)
	return nil
}

// CreateSequential implements Store.
func (e *Embedded) CreateSequential(prefix string, data []byte, ephemeral bool) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(prefix); err != nil {
		return "", err
	}
	parentPath := Parent(prefix)
	parent, ok := e.nodes[parentPath]
	if !ok {
		return "", ErrNoNode
	}
	seq := parent.cseq
	parent.cseq++
	p := fmt.Sprintf("%s%010d", prefix, seq)
	if err := e.createLocked(p, data, ephemeral); err != nil {
		parent.cseq--
		return "", err
	}
	if ephemeral {
		// The counter advanced: persist it so numbers are never reused.
		if err := e.persistLocked(); err != nil {
			return "", err
		}
	}
	return p, nil
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

// Set implements Store.
func (e *Embedded) Set(p string, data []byte, version int32) (int32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(p); err != nil {
		return 0, err
	}
	n, err := versioned(e.nodes, p, version)
	if err != nil {
		return 0, err
	}
	oldData, oldVersion := n.data, n.version
	n.data, n.version = clone(data), n.version+1
	if !n.ephemeral {
		if err := e.persistLocked(); err != nil {
			n.data, n.version = oldData, oldVersion
			return 0, err
		}
	}
	e.fire(e.dataW, p, EventNodeDataChanged)
	return n.version, nil
}

// Delete implements Store.
func (e *Embedded) Delete(p string, version int32) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(p); err != nil {
		return err
	}
	n, err := deletable(e.nodes, p, version)
	if err != nil {
		return err
	}
	parent := e.nodes[Parent(p)]
	delete(e.nodes, p)
	delete(parent.children, Base(p))
	if !n.ephemeral {
		if err := e.persistLocked(); err != nil {
			e.nodes[p] = n
			parent.children[Base(p)] = struct{}{}
			return err
		}
	}
	e.fireDeleted(p)
	return nil
}

func (e *Embedded) fireDeleted(p string) {
	e.fire(e.dataW, p, EventNodeDeleted)
	e.fire(e.childW, p, EventNodeDeleted)
	e.fire(e.childW, Parent(p), EventNodeChildrenChanged)
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
// as deletions first), then every pending watch gets EventNotWatching.
func (e *Embedded) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
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

// persistLocked writes every persistent node to the snapshot file
// atomically: a crash leaves either the old or the new snapshot.
func (e *Embedded) persistLocked() error {
	snap := fileSnapshot{Format: snapshotFormat, Nodes: make(map[string]fileNode, len(e.nodes))}
	for p, n := range e.nodes {
		if n.ephemeral {
			continue
		}
		fn := fileNode{Version: n.version, CSeq: n.cseq}
		if len(n.data) > 0 {
			if utf8.Valid(n.data) {
				s := string(n.data)
				fn.Data = &s
			} else {
				s := base64.StdEncoding.EncodeToString(n.data)
				fn.DataBase64 = &s
			}
		}
		snap.Nodes[p] = fn
	}
	raw, err := json.MarshalIndent(snap, "", " ")
	if err != nil {
		return fmt.Errorf("metastore: encode snapshot: %w", err)
	}
	return writeFileAtomic(e.file, raw)
}

// writeFileAtomic replaces file with data: write a temp file in the same
// directory, fsync it, rename it over file, fsync the directory.
func writeFileAtomic(file string, data []byte) error {
	dir := filepath.Dir(file)
	tmp, err := os.CreateTemp(dir, filepath.Base(file)+".tmp-*")
	if err != nil {
		return fmt.Errorf("metastore: persist: %w", err)
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("metastore: persist: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("metastore: persist: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("metastore: persist: %w", err)
	}
	if err := os.Rename(tmpName, file); err != nil {
		return fmt.Errorf("metastore: persist: %w", err)
	}
	ok = true
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("metastore: persist: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("metastore: persist: fsync dir: %w", err)
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
