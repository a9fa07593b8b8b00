package metastore

// OnSession implements Store. The embedded store is its own session: it
// never disconnects or expires, so fn is never called.
func (e *Embedded) OnSession(fn func(SessionEvent)) (remove func()) { return func() {} }

// Multi implements Store: every op is checked against the tree as the
// earlier ops would leave it; only when all pass are they applied, and
// they are written in the one bbolt transaction of their commit, so they
// are durable together or not at all. A failed commit undoes the whole
// batch.
func (e *Embedded) Multi(ops ...Op) ([]OpResult, error) {
	var results []OpResult
	err := e.write(func(b *batch) error {
		if e.closed {
			return ErrClosed
		}
		var err error
		if results, err = checkMulti(e.nodes, ops); err != nil {
			return err
		}
		for i, op := range ops {
			if o, ok := op.(*CreateOp); ok && !o.Ephemeral {
				if err := checkKey(o.Path); err != nil {
					return &MultiError{Index: i, Path: o.Path, Err: err}
				}
			}
		}
		// Validation guarantees every step succeeds.
		for _, op := range ops {
			switch o := op.(type) {
			case *CreateOp:
				b.addNode(o.Path, o.Data, o.Ephemeral)
			case *SetOp:
				b.setNode(o.Path, e.nodes[o.Path], o.Data)
			case *DeleteOp:
				b.deleteNode(o.Path)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}
