package metastore

import "fmt"

// simNode is a node as Multi's validation pass sees it after the earlier
// ops of the same transaction.
type simNode struct {
	exists    bool
	version   int32
	ephemeral bool
	children  int
}

// checkMulti validates a Multi transaction against the tree nodes without
// changing it: every op is checked against the tree as the earlier ops
// would leave it, as ZooKeeper's multi does. It returns each op's result
// when all pass, else a *MultiError naming the first failing op. The
// embedded and the in-memory stores share it.
func checkMulti(nodes map[string]*node, ops []Op) ([]OpResult, error) {
	sim := map[string]*simNode{}
	look := func(p string) *simNode {
		if s, ok := sim[p]; ok {
			return s
		}
		s := &simNode{}
		if n, ok := nodes[p]; ok {
			*s = simNode{exists: true, version: n.version, ephemeral: n.ephemeral, children: len(n.children)}
		}
		sim[p] = s
		return s
	}
	results := make([]OpResult, len(ops))
	for i, op := range ops {
		if op == nil {
			return nil, &MultiError{Index: i, Err: fmt.Errorf("%w: nil op", ErrInvalidPath)}
		}
		p := op.opPath()
		fail := func(err error) ([]OpResult, error) {
			return nil, &MultiError{Index: i, Path: p, Err: err}
		}
		if err := ValidatePath(p); err != nil {
			return fail(err)
		}
		n := look(p)
		switch o := op.(type) {
		case *CheckVersionOp:
			if !n.exists {
				return fail(ErrNoNode)
			}
			if o.Version != AnyVersion && o.Version != n.version {
				return fail(ErrBadVersion)
			}
			results[i] = OpResult{Path: p, Version: o.Version}
		case *CreateOp:
			if p == "/" || n.exists {
				return fail(ErrNodeExists)
			}
			parent := look(Parent(p))
			if !parent.exists {
				return fail(ErrNoNode)
			}
			if parent.ephemeral {
				return fail(ErrNoChildrenForEphemerals)
			}
			*n = simNode{exists: true, ephemeral: o.Ephemeral}
			parent.children++
			results[i] = OpResult{Path: p}
		case *SetOp:
			if !n.exists {
				return fail(ErrNoNode)
			}
			if o.Version != AnyVersion && o.Version != n.version {
				return fail(ErrBadVersion)
			}
			n.version++
			results[i] = OpResult{Path: p, Version: n.version}
		case *DeleteOp:
			if p == "/" {
				return fail(ErrInvalidPath)
			}
			if !n.exists {
				return fail(ErrNoNode)
			}
			if o.Version != AnyVersion && o.Version != n.version {
				return fail(ErrBadVersion)
			}
			if n.children > 0 {
				return fail(ErrNotEmpty)
			}
			*n = simNode{}
			look(Parent(p)).children--
			results[i] = OpResult{Path: p}
		default:
			return fail(fmt.Errorf("%w: unknown op %T", ErrInvalidPath, op))
		}
	}

	return results, nil
}
