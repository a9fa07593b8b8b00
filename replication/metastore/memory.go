package metastore

import (
	"fmt"
	"sort"
	"sync"
)

// Memory is an in-memory ZooKeeper ensemble for tests: one shared tree
// that several sessions read and write, as several brokers share one
// ZooKeeper. Each MemorySession (Open) is a Store of its own, with the
// ephemeral nodes it created and the watches it armed, and can be expired
// (Expire) or cut off and reconnected (Disconnect, Reconnect) on its own,
// with the errors, watch events and SessionState transitions zkstore
// reports for the same thing on a real ZooKeeper. Nothing is persisted.
// Safe for concurrent use.
type Memory struct {
	mu       sync.Mutex
	nodes    map[string]*node
	lastID   int64                       // last session id handed out
	sessions map[*MemorySession]struct{} // open handles: every watch lives in one
	changed  chan struct{}               // closed and replaced at every change to the tree
}

// firstSessionID is above zero and looks like a ZooKeeper session id in
// logs (0x…); ids only grow, so an expired session's id is never reused.
const firstSessionID = 0x1000000

// NewMemory returns an ensemble whose tree holds only "/".
func NewMemory() *Memory {
	return &Memory{
		nodes:    map[string]*node{"/": {children: map[string]struct{}{}}},
		lastID:   firstSessionID,
		sessions: map[*MemorySession]struct{}{},
		changed:  make(chan struct{}),
	}
}

// Changed returns a channel closed at the tree's next change (a node
// created, set or deleted, by any session or by an expiry), so a test
// can wait for a condition on the tree without polling it.
func (m *Memory) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

func (m *Memory) bumpLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// Open starts a new session on the ensemble. Close it when done: its
// ephemeral nodes are deleted then, as a closed ZooKeeper session's are.
func (m *Memory) Open() *MemorySession {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &MemorySession{
		m:      m,
		id:     m.newIDLocked(),
		dataW:  map[string][]chan Event{},
		childW: map[string][]chan Event{},
		events: NewSessionEvents(),
	}
	m.sessions[s] = struct{}{}
	return s
}

func (m *Memory) newIDLocked() int64 {
	m.lastID++
	return m.lastID
}

// Dump renders the tree for debugging, one "path (vN[ ephemeral 0xID])
// data" line per node, sorted.
func (m *Memory) Dump() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return dumpNodes(m.nodes)
}

// watchSet picks one of a session's two watch tables.
type watchSet int

const (
	dataWatches  watchSet = iota // GetW and ExistsW
	childWatches                 // ChildrenW
)

// fireLocked delivers an event on p to the watches of every session.
func (m *Memory) fireLocked(set watchSet, p string, t EventType) {
	for s := range m.sessions {
		s.fireLocked(set, p, t)
	}
}

// createLocked adds a node; the caller has checked that p is valid and
// that the calling session may write.
func (m *Memory) createLocked(p string, data []byte, ephemeral bool, owner int64) error {
	parent, err := createParent(m.nodes, p)
	if err != nil {
		return err
	}
	n := &node{data: clone(data), ephemeral: ephemeral, children: map[string]struct{}{}}
	if ephemeral {
		n.owner = owner
	}
	m.nodes[p] = n
	parent.children[Base(p)] = struct{}{}
	m.bumpLocked()
	m.fireLocked(dataWatches, p, EventNodeCreated)
	m.fireLocked(childWatches, Parent(p), EventNodeChildrenChanged)
	return nil
}

// setLocked replaces a node's data if version matches.
func (m *Memory) setLocked(p string, data []byte, version int32) (int32, error) {
	n, err := versioned(m.nodes, p, version)
	if err != nil {
		return 0, err
	}
	n.data, n.version = clone(data), n.version+1
	m.bumpLocked()
	m.fireLocked(dataWatches, p, EventNodeDataChanged)
	return n.version, nil
}

// deleteLocked removes a childless node if version matches.
func (m *Memory) deleteLocked(p string, version int32) error {
	if _, err := deletable(m.nodes, p, version); err != nil {
		return err
	}
	delete(m.nodes, p)
	delete(m.nodes[Parent(p)].children, Base(p))
	m.bumpLocked()
	m.fireLocked(dataWatches, p, EventNodeDeleted)
	m.fireLocked(childWatches, p, EventNodeDeleted)
	m.fireLocked(childWatches, Parent(p), EventNodeChildrenChanged)
	return nil
}

// dropEphemeralsLocked deletes every ephemeral node of session id, as the
// ensemble does when a session closes or expires; the other sessions'
// watches fire.
func (m *Memory) dropEphemeralsLocked(id int64) {
	var eph []string
	for p, n := range m.nodes {
		if n.ephemeral && n.owner == id {
			eph = append(eph, p)
		}
	}
	sort.Strings(eph) // deterministic event order
	for _, p := range eph {
		_ = m.deleteLocked(p, AnyVersion) // ephemerals have no children: cannot fail
	}
}

// multiLocked applies ops atomically (see Store.Multi).
func (m *Memory) multiLocked(ops []Op, owner int64) ([]OpResult, error) {
	results, err := checkMulti(m.nodes, ops)
	if err != nil {
		return nil, err
	}
	// Validation passed against the tree as each op leaves it, so every
	// step below succeeds; watches fire op by op.
	for _, op := range ops {
		switch o := op.(type) {
		case *CreateOp:
			err = m.createLocked(o.Path, o.Data, o.Ephemeral, owner)
		case *SetOp:
			_, err = m.setLocked(o.Path, o.Data, o.Version)
		case *DeleteOp:
			err = m.deleteLocked(o.Path, o.Version)
		}
		if err != nil { // a bug in checkMulti: say so rather than half-apply silently
			return nil, fmt.Errorf("metastore: memory multi applied partially after validation: %w", err)
		}
	}
	return results, nil
}
