package metastore

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// Converting the JSON snapshot of older versions into the database.
//
// The snapshot (snapshot format 1) was one file rewritten whole at every
// change:
//
//	{"format":1,"nodes":{"/brokers/topics/t":{"data":"{…}","version":0,"cseq":0},…}}
//
// "data" held the node data when it was valid UTF-8, otherwise
// "data_base64" held it base64-encoded; the root "/" was implicit.
//
// The conversion is crash-safe by its order: the tree is written to
// <db>.migrating and committed, that file is renamed to the database, the
// directory fsynced, and only then is the snapshot renamed to
// <snapshot>.migrated. A crash before the first rename leaves the snapshot
// in charge (the next open deletes the partial file and starts again);
// after it, the database is complete and the next open only finishes the
// snapshot's rename.

// snapshotFormat is the version of the JSON snapshot layout.
const snapshotFormat = 1

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

// migrateSnapshot converts snap into dbFile when snap exists, and reports
// whether it did. When both exist, an earlier conversion got as far as
// the database: the snapshot is only renamed out of the way.
func migrateSnapshot(snap, dbFile string) (bool, error) {
	if _, err := os.Stat(snap); errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("metastore: %w", err)
	}
	dir := filepath.Dir(dbFile)
	if _, err := os.Stat(dbFile); err == nil {
		return false, retireSnapshot(snap, dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("metastore: %w", err)
	}
	nodes, err := readSnapshot(snap)
	if err != nil {
		return false, err
	}
	tmp := dbFile + migratingSuffix
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("metastore: remove a partial conversion: %w", err)
	}
	if err := writeDB(tmp, nodes); err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("metastore: convert %s: %w", snap, err)
	}
	if err := os.Rename(tmp, dbFile); err != nil {
		return false, fmt.Errorf("metastore: convert %s: %w", snap, err)
	}
	if err := syncDir(dir); err != nil {
		return false, err
	}
	return true, retireSnapshot(snap, dir)
}

// retireSnapshot renames a converted snapshot to <snapshot>.migrated.
func retireSnapshot(snap, dir string) error {
	if err := os.Rename(snap, snap+MigratedSuffix); err != nil {
		return fmt.Errorf("metastore: rename the converted snapshot: %w", err)
	}
	return syncDir(dir)
}

// writeDB creates a database at file holding nodes, committed (fsynced).
func writeDB(file string, nodes map[string]*node) error {
	db, err := bolt.Open(file, 0o644, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := initLayout(tx); err != nil {
			return err
		}
		return putNodes(tx, nodes)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// readSnapshot parses a JSON snapshot into a tree. A file that does not
// parse, or whose nodes lack parents, returns an error wrapping
// ErrCorrupt.
func readSnapshot(file string) (map[string]*node, error) {
	raw, err := os.ReadFile(file)
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
	nodes := map[string]*node{"/": {children: map[string]struct{}{}}}
	paths := make([]string, 0, len(snap.Nodes))
	for p := range snap.Nodes {
		paths = append(paths, p)
	}
	// Parents sort before their children ("/a" < "/a/b").
	sort.Strings(paths)
	for _, p := range paths {
		fn := snap.Nodes[p]
		if p == "/" {
			nodes["/"].cseq = fn.CSeq
			continue
		}
		if err := ValidatePath(p); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, file, err)
		}
		if err := checkKey(p); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, file, err)
		}
		parent, ok := nodes[Parent(p)]
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
		nodes[p] = n
		parent.children[Base(p)] = struct{}{}
	}
	return nodes, nil
}
