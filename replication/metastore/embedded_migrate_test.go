package metastore

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// oldSnapshot is a snapshot as the JSON store of earlier versions wrote it
// (json.MarshalIndent with one space): a topic with two partitions, a
// binary node, a persisted sequential counter.
const oldSnapshot = `{
 "format": 1,
 "nodes": {
  "/": {"version": 0, "cseq": 0},
  "/brokers": {"version": 0, "cseq": 0},
  "/brokers/topics": {"version": 0, "cseq": 0},
  "/brokers/topics/orders": {"data": "{\"version\":2,\"partitions\":{\"0\":[0],\"1\":[0]}}", "version": 3, "cseq": 0},
  "/brokers/topics/orders/partitions": {"version": 0, "cseq": 0},
  "/brokers/topics/orders/partitions/0": {"version": 0, "cseq": 0},
  "/brokers/topics/orders/partitions/0/state": {"data": "{\"leader\":0,\"leader_epoch\":4}", "version": 7, "cseq": 0},
  "/brokers/topics/orders/partitions/1": {"version": 0, "cseq": 0},
  "/brokers/topics/orders/partitions/1/state": {"data": "{\"leader\":0,\"leader_epoch\":1}", "version": 1, "cseq": 0},
  "/bin": {"data_base64": "/wD+", "version": 2, "cseq": 0},
  "/isr_change_notification": {"version": 0, "cseq": 5}
 }
}`

func writeOldSnapshot(t *testing.T, dir string) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(dir, SnapshotFileName), []byte(oldSnapshot), 0o644))
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	must(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// checkMigrated asserts the tree of oldSnapshot, read through s.
func checkMigrated(t *testing.T, s *Embedded) {
	t.Helper()
	for p, want := range map[string]struct {
		data    string
		version int32
	}{
		"/brokers/topics/orders":                    {`{"version":2,"partitions":{"0":[0],"1":[0]}}`, 3},
		"/brokers/topics/orders/partitions/0/state": {`{"leader":0,"leader_epoch":4}`, 7},
		"/brokers/topics/orders/partitions/1/state": {`{"leader":0,"leader_epoch":1}`, 1},
		"/bin": {"\xff\x00\xfe", 2},
	} {
		data, v, err := s.Get(p)
		if err != nil || string(data) != want.data || v != want.version {
			t.Errorf("%s = %q v%d %v, want %q v%d", p, data, v, err, want.data, want.version)
		}
	}
	kids, err := s.Children("/brokers/topics/orders/partitions")
	if err != nil || !reflect.DeepEqual(kids, []string{"0", "1"}) {
		t.Errorf("partitions = %v %v", kids, err)
	}
}

func TestEmbeddedMigratesJSONSnapshot(t *testing.T) {
	dir := t.TempDir()
	writeOldSnapshot(t, dir)
	s, err := OpenEmbeddedDir(dir)
	must(t, err)
	if s.MigratedFrom() != filepath.Join(dir, SnapshotFileName) {
		t.Errorf("MigratedFrom = %q", s.MigratedFrom())
	}
	checkMigrated(t, s)
	// The counter came along: the next sequential child is number 5.
	seq, err := s.CreateSequential("/isr_change_notification/isr_change_", nil, false)
	if err != nil || seq != "/isr_change_notification/isr_change_0000000005" {
		t.Fatalf("sequential after migration = %q %v", seq, err)
	}
	_, err = s.Set("/brokers/topics/orders/partitions/1/state", []byte(`{"leader":0,"leader_epoch":2}`), 1)
	must(t, err)
	must(t, s.Close())
	want := []string{DBFileName, SnapshotFileName + MigratedSuffix}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("files after migration %v, want %v", got, want)
	}

	// A second open reads the database only, with the change made after
	// the conversion.
	s2, err := OpenEmbeddedDir(dir)
	must(t, err)
	defer s2.Close()
	if s2.MigratedFrom() != "" {
		t.Errorf("second open migrated again from %q", s2.MigratedFrom())
	}
	if d, v, _ := s2.Get("/brokers/topics/orders/partitions/1/state"); string(d) != `{"leader":0,"leader_epoch":2}` || v != 2 {
		t.Fatalf("state after reopen = %q v%d", d, v)
	}
	if ok, _ := s2.Exists("/isr_change_notification/isr_change_0000000005"); !ok {
		t.Fatal("sequential node lost")
	}
}

// A crash during a conversion leaves a partial <db>.migrating and the
// snapshot: the next open starts the conversion again.
func TestEmbeddedMigrationRestartsAfterCrash(t *testing.T) {
	dir := t.TempDir()
	writeOldSnapshot(t, dir)
	must(t, os.WriteFile(filepath.Join(dir, DBFileName+migratingSuffix), []byte("half a database"), 0o644))
	s, err := OpenEmbeddedDir(dir)
	must(t, err)
	defer s.Close()
	checkMigrated(t, s)
	want := []string{DBFileName, SnapshotFileName + MigratedSuffix}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
}

// A crash after the database was renamed into place but before the
// snapshot was renamed away: the database wins (it may already hold
// changes made after the conversion), the snapshot is retired.
func TestEmbeddedMigrationFinishesAfterCrash(t *testing.T) {
	dir := t.TempDir()
	writeOldSnapshot(t, dir)
	s, err := OpenEmbeddedDir(dir)
	must(t, err)
	must(t, s.Create("/after", []byte("new"), false))
	must(t, s.Close())
	// Put the snapshot back as if its rename had not happened.
	must(t, os.Rename(filepath.Join(dir, SnapshotFileName+MigratedSuffix), filepath.Join(dir, SnapshotFileName)))

	s2, err := OpenEmbeddedDir(dir)
	must(t, err)
	defer s2.Close()
	if s2.MigratedFrom() != "" {
		t.Errorf("converted again from %q", s2.MigratedFrom())
	}
	if d, _, err := s2.Get("/after"); err != nil || string(d) != "new" {
		t.Fatalf("/after = %q %v: the snapshot replaced the database", d, err)
	}
	checkMigrated(t, s2)
	want := []string{DBFileName, SnapshotFileName + MigratedSuffix}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
}

func TestEmbeddedCorruptSnapshotIsNotConverted(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{`{not json`, `{"format":9,"nodes":{}}`, `{"format":1,"nodes":{"/a/b":{"version":0}}}`,
		`{"format":1,"nodes":{"/a":{"data_base64":"%%%","version":0}}}`} {
		must(t, os.WriteFile(filepath.Join(dir, SnapshotFileName), []byte(content), 0o644))
		if _, err := OpenEmbeddedDir(dir); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: got %v, want ErrCorrupt", content, err)
		}
		// The snapshot stays for the operator; no database was made of it.
		if got := dirNames(t, dir); !reflect.DeepEqual(got, []string{SnapshotFileName}) {
			t.Fatalf("%s: files %v", content, got)
		}
	}
}

func TestEmbeddedCorruptDatabase(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, DBFileName), make([]byte, 8192), 0o644))
	if _, err := OpenEmbeddedDir(dir); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("zeroed database: got %v, want ErrCorrupt", err)
	}
	must(t, os.WriteFile(filepath.Join(dir, DBFileName), []byte("{\"format\":1}"), 0o644))
	if _, err := OpenEmbeddedDir(dir); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("JSON in place of the database: got %v, want ErrCorrupt", err)
	}

	// A valid bbolt file whose content breaks the layout.
	for name, edit := range map[string]func(tx *bolt.Tx) error{
		"unknown layout": func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyLayout, []byte("9")) },
		"orphan node":    func(tx *bolt.Tx) error { return tx.Bucket(bucketNodes).Put([]byte("/a/b"), make([]byte, nodeHeader)) },
		"short value":    func(tx *bolt.Tx) error { return tx.Bucket(bucketNodes).Put([]byte("/a"), []byte{1}) },
		"bad path":       func(tx *bolt.Tx) error { return tx.Bucket(bucketNodes).Put([]byte("/a/"), make([]byte, nodeHeader)) },
	} {
		dir := t.TempDir()
		s, err := OpenEmbeddedDir(dir)
		must(t, err)
		must(t, s.Close())
		db, err := bolt.Open(filepath.Join(dir, DBFileName), 0o644, nil)
		must(t, err)
		must(t, db.Update(edit))
		must(t, db.Close())
		if _, err := OpenEmbeddedDir(dir); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
}
