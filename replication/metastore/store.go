// Package metastore is the cluster-metadata store contract: ZooKeeper's
// primitives (versioned znodes, ephemeral nodes, one-shot watches), so that
// the controller code runs unchanged over a real ZooKeeper ensemble
// (zookeeper.connect set) or over the embedded, file-backed store of the
// zero-config single-node mode (embedded.go).
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

import "errors"

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
	// (ZooKeeper's SEQUENTIAL flag) and returns the full path.
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
}
