package metastore

// The checks ZooKeeper makes before a create, a set and a delete, on a
// tree of nodes by path; the embedded and the in-memory stores share them
// (checkMulti makes the same checks on its simulated tree).

// createParent returns the parent under which p may be created: ErrNodeExists
// when p (or the root) exists, ErrNoNode without a parent,
// ErrNoChildrenForEphemerals under an ephemeral.
func createParent(nodes map[string]*node, p string) (*node, error) {
	if _, ok := nodes[p]; ok || p == "/" {
		return nil, ErrNodeExists
	}
	parent, ok := nodes[Parent(p)]
	if !ok {
		return nil, ErrNoNode
	}
	if parent.ephemeral {
		return nil, ErrNoChildrenForEphemerals
	}
	return parent, nil
}

// versioned returns the node at p when its version is version (or
// version is AnyVersion): ErrNoNode, ErrBadVersion.
func versioned(nodes map[string]*node, p string, version int32) (*node, error) {
	n, ok := nodes[p]
	if !ok {
		return nil, ErrNoNode
	}
	if version != AnyVersion && version != n.version {
		return nil, ErrBadVersion
	}
	return n, nil
}

// deletable is versioned for a delete: the root is ErrInvalidPath and a
// node with children ErrNotEmpty.
func deletable(nodes map[string]*node, p string, version int32) (*node, error) {
	if p == "/" {
		return nil, ErrInvalidPath
	}
	n, err := versioned(nodes, p, version)
	if err != nil {
		return nil, err
	}
	if len(n.children) > 0 {
		return nil, ErrNotEmpty
	}
	return n, nil
}
