// Package metastore is the cluster-metadata store contract: ZooKeeper's
// primitives (versioned znodes, ephemeral nodes, one-shot watches), so that
// the controller code runs unchanged over a real ZooKeeper ensemble
// (zookeeper.connect set) or over the embedded, file-backed store of the
// zero-config single-node mode (embedded.go). Memory (memory.go) is an
// in-memory ensemble with one session per broker, for in-process cluster
// tests.
//
// Semantics follow ZooKeeper 3.x:
//   - paths are absolute, "/"-separated, without a trailing slash (root "/");
//   - Create fails with ErrNodeExists when the node exists and ErrNoNode when
//     its parent does not (use CreateAll / EnsurePath for mkdir -p);
//   - every node has a data version, 0 after create, +1 per Set; Set and
//     Delete take an expected version, -1 meaning "any" (compare-and-set);
//   - ephemeral nodes belong to the store handle (the ZooKeeper session):
//     they vanish on Close and cannot have children;
//   - watches are one-shot: a channel receives exactly one Event, then is
//     closed. Close delivers EventNotWatching to pending watches.
package metastore

import (
	"errors"
	"strconv"
)

// Errors, named after ZooKeeper's KeeperException codes.
var (
	ErrNoNode                  = errors.New("metastore: node does not exist") // NONODE
	ErrNodeExists              = errors.New("metastore: node already exists") // NODEEXISTS
	ErrBadVersion              = errors.New("metastore: version conflict")    // BADVERSION
	ErrNotEmpty                = errors.New("metastore: node has children")   // NOTEMPTY
	ErrNoChildrenForEphemerals = errors.New("metastore: ephemeral nodes cannot have children")
	ErrInvalidPath             = errors.New("metastore: invalid path")
	ErrClosed                  = errors.New("metastore: store closed") // SESSIONEXPIRED / connection closed
	ErrCorrupt                 = errors.New("metastore: corrupt snapshot")
	// ErrConnectionLoss (CONNECTIONLOSS): the connection to the ensemble
	// dropped while the call was in flight; it may or may not have been
	// applied. Transient: re-read and retry once the session is back.
	ErrConnectionLoss = errors.New("metastore: connection to the ensemble lost")
	// ErrSessionExpired (SESSIONEXPIRED): the session expired; its
	// ephemeral nodes are gone. The store reconnects with a new session
	// (see OnSession); the caller retries after SessionEstablished.
	ErrSessionExpired = errors.New("metastore: session expired")
)

// AnyVersion makes Set and Delete unconditional.
const AnyVersion int32 = -1

// EventType says what triggered a watch (ZooKeeper's Watcher.Event.EventType).
type EventType int

// Watch event types.
const (
	EventNodeCreated EventType = iota + 1
	EventNodeDeleted
	EventNodeDataChanged
	EventNodeChildrenChanged
	// EventNotWatching: the store closed (or the session expired) before
	// the watch fired; re-read and re-arm on a new handle.
	EventNotWatching
)

// String names the event type like ZooKeeper does.
func (t EventType) String() string {
	switch t {
	case EventNodeCreated:
		return "NodeCreated"
	case EventNodeDeleted:
		return "NodeDeleted"
	case EventNodeDataChanged:
		return "NodeDataChanged"
	case EventNodeChildrenChanged:
		return "NodeChildrenChanged"
	case EventNotWatching:
		return "NotWatching"
	}
	return "Unknown"
}

// Event is delivered once on a watch channel.
type Event struct {
	Type EventType
	Path string // the watched path
}

// Store is the metadata store. Implementations are safe for concurrent use.
type Store interface {
	// Create makes a node with data. ephemeral nodes vanish when the store
	// handle closes. Errors: ErrNodeExists, ErrNoNode (parent missing),
	// ErrNoChildrenForEphemerals, ErrInvalidPath, ErrClosed.
	Create(path string, data []byte, ephemeral bool) error
	// CreateSequential makes a persistent or ephemeral node named prefix
	// followed by a 10-digit, zero-padded counter kept by the parent
	// (ZooKeeper's SEQUENTIAL flag) and returns the full path. Numbers
	// grow but may have gaps: ZooKeeper takes them from the parent's child
	// version, which every child create and delete bumps.
	CreateSequential(prefix string, data []byte, ephemeral bool) (string, error)
	// Get returns a node's data and data version. Errors: ErrNoNode.
	Get(path string) (data []byte, version int32, err error)
	// GetW is Get plus a one-shot watch that fires on the node's next data
	// change (EventNodeDataChanged) or deletion (EventNodeDeleted).
	GetW(path string) (data []byte, version int32, w <-chan Event, err error)
	// Set replaces a node's data if its version equals version (or version
	// is AnyVersion) and returns the new version. Errors: ErrNoNode, ErrBadVersion.
	Set(path string, data []byte, version int32) (int32, error)
	// Delete removes a childless node if its version matches (or
	// AnyVersion). Errors: ErrNoNode, ErrBadVersion, ErrNotEmpty.
	Delete(path string, version int32) error
	// Children lists a node's child names (not paths), sorted. Errors: ErrNoNode.
	Children(path string) ([]string, error)
	// ChildrenW is Children plus a one-shot watch that fires when a child is
	// created or deleted (EventNodeChildrenChanged) or the node is deleted.
	ChildrenW(path string) ([]string, <-chan Event, error)
	// Exists reports whether a node exists.
	Exists(path string) (bool, error)
	// ExistsW is Exists plus a one-shot watch that fires on the node's
	// creation, data change or deletion.
	ExistsW(path string) (bool, <-chan Event, error)
	// Close ends the handle: its ephemeral nodes are removed and pending
	// watches receive EventNotWatching. Later calls return ErrClosed.
	Close() error

	SessionStore
}

// SessionState is a change in the store handle's session, as ZooKeeper
// reports it (zk.State in go-zookeeper; Watcher.Event.KeeperState in Java).
type SessionState int

// Session states delivered to OnSession callbacks.
const (
	// SessionDisconnected: the connection to the ensemble dropped; the
	// session may still be alive (its ephemerals and watches survive if
	// the client reconnects within the session timeout). Informational.
	SessionDisconnected SessionState = iota + 1
	// SessionExpired: the ensemble expired the session. Every ephemeral node
	// of the handle is gone and every pending watch has received (or will
	// receive) EventNotWatching. Owners must stop acting on what they held
	// (a controller resigns) and wait for SessionEstablished.
	SessionExpired
	// SessionEstablished: a new session is up after an expiry (its ID
	// differs from the old one). Owners re-create their ephemeral nodes
	// (/brokers/ids/<id>, /controller election) and re-arm their watches.
	// It is not delivered for the handle's first session.
	SessionEstablished
	// SessionReconnected: the connection came back within the session
	// timeout; the session, its ephemerals and watches are intact.
	// Informational.
	SessionReconnected
)

// String names the state.
func (s SessionState) String() string {
	switch s {
	case SessionDisconnected:
		return "Disconnected"
	case SessionExpired:
		return "Expired"
	case SessionEstablished:
		return "Established"
	case SessionReconnected:
		return "Reconnected"
	}
	return "Unknown"
}

// SessionEvent is passed to OnSession callbacks.
type SessionEvent struct {
	State SessionState
	// SessionID is the session the event refers to: the expired one for
	// SessionExpired, the new one for SessionEstablished (0 when unknown).
	SessionID int64
}

// Op is one operation of a Multi transaction: *CheckVersionOp, *CreateOp,
// *SetOp or *DeleteOp (ZooKeeper's multi: check, create, setData, delete).
type Op interface{ opPath() string }

// CheckVersionOp asserts that Path exists with data version Version
// (AnyVersion: just that it exists). Kafka's controller puts one on
// /controller_epoch in front of its partition-state writes so a deposed
// controller's writes fail (controller-epoch fencing).
type CheckVersionOp struct {
	Path    string
	Version int32
}

// CreateOp creates Path with Data (persistent unless Ephemeral).
type CreateOp struct {
	Path      string
	Data      []byte
	Ephemeral bool
}

// SetOp replaces Path's data if its version is Version (or AnyVersion).
type SetOp struct {
	Path    string
	Data    []byte
	Version int32
}

// DeleteOp removes the childless node Path if its version is Version (or AnyVersion).
type DeleteOp struct {
	Path    string
	Version int32
}

func (o *CheckVersionOp) opPath() string { return o.Path }
func (o *CreateOp) opPath() string       { return o.Path }
func (o *SetOp) opPath() string          { return o.Path }
func (o *DeleteOp) opPath() string       { return o.Path }

// OpResult is the outcome of one successful Multi operation.
type OpResult struct {
	// Path is the created path for CreateOp, else the op's path.
	Path string
	// Version is the node's data version after a SetOp, the checked
	// version as given for a CheckVersionOp (0 after a CreateOp, unused
	// for DeleteOp).
	Version int32
}

// MultiError reports which operation of a Multi failed; nothing was
// applied. errors.Is(err, ErrBadVersion) etc. see the operation's error.
type MultiError struct {
	Index int    // position of the failing op in the Multi call
	Path  string // its path
	Err   error  // ErrNoNode, ErrNodeExists, ErrBadVersion, ErrNotEmpty, …
}

func (e *MultiError) Error() string {
	return "metastore: multi op " + strconv.Itoa(e.Index) + " on " + quote(e.Path) + ": " + e.Err.Error()
}

// Unwrap returns the failing operation's error.
func (e *MultiError) Unwrap() error { return e.Err }

// SessionStore is the part of Store that concerns sessions and
// transactions; it is split out only for documentation, Store embeds it.
type SessionStore interface {
	// OnSession registers fn for session changes and returns a function
	// that unregisters it. Callbacks run one at a time, in event order, on
	// a goroutine owned by the store; fn must not block (send to an actor
	// or a buffered channel) and must not call remove from inside fn. The
	// embedded store never loses its session, so it never calls fn.
	OnSession(fn func(SessionEvent)) (remove func())
	// Multi applies ops atomically: all succeed or none is applied, in
	// which case the error is a *MultiError naming the failing op. Results
	// are in op order. Watches fire as if the ops were applied one by one.
	Multi(ops ...Op) ([]OpResult, error)
}
