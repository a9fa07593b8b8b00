package metastore

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The embedded store's database layout (see Embedded): bucket "nodes",
// path → version | cseq | data; bucket "meta", "layout" → "1".

var (
	bucketNodes = []byte("nodes")
	bucketMeta  = []byte("meta")
	keyLayout   = []byte("layout")
)

// dbLayout is the version of the layout; an unknown one is refused.
const dbLayout = "1"

// nodeHeader is the size of a stored value before the data.
const nodeHeader = 8

// encodeNode is a persistent node's stored value.
func encodeNode(n *node) []byte {
	v := make([]byte, nodeHeader+len(n.data))
	binary.BigEndian.PutUint32(v[0:4], uint32(n.version))
	binary.BigEndian.PutUint32(v[4:8], uint32(n.cseq))
	copy(v[nodeHeader:], n.data)
	return v
}

// decodeNode parses a stored value; the data is copied out of bbolt's
// memory map, which is only valid inside the transaction.
func decodeNode(v []byte) (*node, bool) {
	if len(v) < nodeHeader {
		return nil, false
	}
	n := &node{
		version:  int32(binary.BigEndian.Uint32(v[0:4])),
		cseq:     int32(binary.BigEndian.Uint32(v[4:8])),
		children: map[string]struct{}{},
	}
	if len(v) > nodeHeader {
		n.data = clone(v[nodeHeader:])
	}
	return n, true
}

// initLayout creates the buckets of an empty database; an existing one
// must carry dbLayout.
func initLayout(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		// A file with no buckets is a database just created (or created by
		// a process killed before its first commit): start it.
		if tx.Bucket(bucketNodes) != nil {
			return fmt.Errorf("%w: bucket %q without %q", ErrCorrupt, bucketNodes, bucketMeta)
		}
		var err error
		if meta, err = tx.CreateBucket(bucketMeta); err != nil {
			return err
		}
		if err := meta.Put(keyLayout, []byte(dbLayout)); err != nil {
			return err
		}
		_, err = tx.CreateBucket(bucketNodes)
		return err
	}
	if l := string(meta.Get(keyLayout)); l != dbLayout {
		return fmt.Errorf("%w: unknown layout %q (this version reads %q)", ErrCorrupt, l, dbLayout)
	}
	if tx.Bucket(bucketNodes) == nil {
		return fmt.Errorf("%w: bucket %q missing", ErrCorrupt, bucketNodes)
	}
	return nil
}

// loadNodes reads the whole tree (creating the layout in an empty file).
// Keys come sorted, and a parent's path is a prefix of its children's, so
// every parent is loaded before its children.
func loadNodes(db *bolt.DB, file string) (map[string]*node, error) {
	// initLayout checks an existing layout without writing; a write
	// transaction (which fsyncs even when it changes nothing) is taken only
	// for a file without buckets yet.
	empty := false
	err := db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta) == nil && tx.Bucket(bucketNodes) == nil {
			empty = true
			return nil
		}
		return initLayout(tx)
	})
	if err == nil && empty {
		err = db.Update(initLayout)
	}
	if err != nil {
		return nil, fmt.Errorf("metastore: %s: %w", file, err)
	}
	var nodes map[string]*node
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNodes)
		nodes = make(map[string]*node, 1024)
		nodes["/"] = &node{children: map[string]struct{}{}}
		return b.ForEach(func(k, v []byte) error {
			p := string(k)
			n, ok := decodeNode(v)
			if !ok {
				return fmt.Errorf("%w: %s: node %q: value of %d bytes", ErrCorrupt, file, p, len(v))
			}
			if p == "/" {
				nodes["/"].cseq = n.cseq
				return nil
			}
			if err := ValidatePath(p); err != nil {
				return fmt.Errorf("%w: %s: %v", ErrCorrupt, file, err)
			}
			parent, ok := nodes[Parent(p)]
			if !ok {
				return fmt.Errorf("%w: %s: node %q has no parent", ErrCorrupt, file, p)
			}
			nodes[p] = n
			parent.children[Base(p)] = struct{}{}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return nodes, nil
}

// putNodes writes the given persistent nodes (all of a migrated tree).
func putNodes(tx *bolt.Tx, nodes map[string]*node) error {
	b := tx.Bucket(bucketNodes)
	for p, n := range nodes {
		if n.ephemeral {
			continue
		}
		if err := b.Put([]byte(p), encodeNode(n)); err != nil {
			return fmt.Errorf("node %q: %w", p, err)
		}
	}
	return nil
}
