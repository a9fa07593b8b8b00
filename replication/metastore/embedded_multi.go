package metastore

// OnSession implements Store. The embedded store is its own session: it
// never disconnects or expires, so fn is never called.
func (e *Embedded) OnSession(fn func(SessionEvent)) (remove func()) { return func() {} }

// Multi implements Store: every op is checked against the tree as the
// earlier ops would leave it; only when all pass are they applied and the
// snapshot written once. A failed snapshot write undoes the whole batch.
func (e *Embedded) Multi(ops ...Op) ([]OpResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	results, err := checkMulti(e.nodes, ops)
	if err != nil {
		return nil, err
	}

	// Apply. Validation guarantees every step succeeds; undo restores the
	// tree if the snapshot cannot be written.
	var undo []func()
	type pending struct {
		m map[string][]chan Event
		p string
		t EventType
	}
	var events []pending
	for _, op := range ops {
		switch o := op.(type) {
		case *CreateOp:
			p := o.Path
			parent := e.nodes[Parent(p)]
			e.nodes[p] = &node{data: clone(o.Data), ephemeral: o.Ephemeral, children: map[string]struct{}{}}
			parent.children[Base(p)] = struct{}{}
			undo = append(undo, func() { delete(e.nodes, p); delete(parent.children, Base(p)) })
			events = append(events, pending{e.dataW, p, EventNodeCreated}, pending{e.childW, Parent(p), EventNodeChildrenChanged})
		case *SetOp:
			n := e.nodes[o.Path]
			oldData, oldVersion := n.data, n.version
			n.data, n.version = clone(o.Data), n.version+1
			undo = append(undo, func() { n.data, n.version = oldData, oldVersion })
			events = append(events, pending{e.dataW, o.Path, EventNodeDataChanged})
		case *DeleteOp:
			p := o.Path
			n := e.nodes[p]
			parent := e.nodes[Parent(p)]
			delete(e.nodes, p)
			delete(parent.children, Base(p))
			undo = append(undo, func() { e.nodes[p] = n; parent.children[Base(p)] = struct{}{} })
			events = append(events, pending{e.dataW, p, EventNodeDeleted}, pending{e.childW, p, EventNodeDeleted},
				pending{e.childW, Parent(p), EventNodeChildrenChanged})
		}
	}
	if err := e.persistLocked(); err != nil {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		return nil, err
	}
	for _, ev := range events {
		e.fire(ev.m, ev.p, ev.t)
	}
	return results, nil
}
