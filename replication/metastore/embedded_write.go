package metastore

import "fmt"

// The embedded store's writes: each checks itself against the tree and
// changes it through a batch of the group commit (embedded_commit.go), so
// it returns only once the change is on disk. A failed check changes
// nothing. Ephemeral nodes change only the tree.

// Create implements Store.
func (e *Embedded) Create(p string, data []byte, ephemeral bool) error {
	return e.write(func(b *batch) error {
		if err := e.check(p); err != nil {
			return err
		}
		if _, err := createParent(e.nodes, p); err != nil {
			return err
		}
		if !ephemeral {
			if err := checkKey(p); err != nil {
				return err
			}
		}
		b.addNode(p, data, ephemeral)
		return nil
	})
}

// CreateSequential implements Store. The parent's counter is persisted
// with the child (for an ephemeral child alone), so a number is never
// handed out twice, across reopens too.
func (e *Embedded) CreateSequential(prefix string, data []byte, ephemeral bool) (string, error) {
	var created string
	err := e.write(func(b *batch) error {
		if err := e.check(prefix); err != nil {
			return err
		}
		parentPath := Parent(prefix)
		parent, ok := e.nodes[parentPath]
		if !ok {
			return ErrNoNode
		}
		p := fmt.Sprintf("%s%010d", prefix, parent.cseq)
		if _, err := createParent(e.nodes, p); err != nil {
			return err
		}
		if err := checkKey(p); err != nil {
			return err
		}
		b.bumpSeq(parentPath, parent)
		b.addNode(p, data, ephemeral)
		created = p
		return nil
	})
	if err != nil {
		return "", err
	}
	return created, nil
}

// Set implements Store.
func (e *Embedded) Set(p string, data []byte, version int32) (int32, error) {
	var nv int32
	err := e.write(func(b *batch) error {
		if err := e.check(p); err != nil {
			return err
		}
		n, err := versioned(e.nodes, p, version)
		if err != nil {
			return err
		}
		b.setNode(p, n, data)
		nv = n.version
		return nil
	})
	if err != nil {
		return 0, err
	}
	return nv, nil
}

// Delete implements Store.
func (e *Embedded) Delete(p string, version int32) error {
	return e.write(func(b *batch) error {
		if err := e.check(p); err != nil {
			return err
		}
		if _, err := deletable(e.nodes, p, version); err != nil {
			return err
		}
		b.deleteNode(p)
		return nil
	})
}
