package metastore

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func openTemp(t *testing.T) (*Embedded, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenEmbeddedDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func TestEmbeddedSemantics(t *testing.T) {
	s, _ := openTemp(t)
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"create without parent", func() error { return s.Create("/a/b", nil, false) }, ErrNoNode},
		{"create /a", func() error { return s.Create("/a", []byte("x"), false) }, nil},
		{"create /a again", func() error { return s.Create("/a", nil, false) }, ErrNodeExists},
		{"create root", func() error { return s.Create("/", nil, false) }, ErrNodeExists},
		{"bad path trailing slash", func() error { return s.Create("/a/", nil, false) }, ErrInvalidPath},
		{"bad path relative", func() error { return s.Create("a", nil, false) }, ErrInvalidPath},
		{"bad path dotdot", func() error { return s.Create("/a/..", nil, false) }, ErrInvalidPath},
		{"create /a/b", func() error { return s.Create("/a/b", []byte("y"), false) }, nil},
		{"set wrong version", func() error { _, err := s.Set("/a", []byte("z"), 5); return err }, ErrBadVersion},
		{"set missing", func() error { _, err := s.Set("/nope", nil, -1); return err }, ErrNoNode},
		{"delete non-empty", func() error { return s.Delete("/a", -1) }, ErrNotEmpty},
		{"delete wrong version", func() error { return s.Delete("/a/b", 3) }, ErrBadVersion},
		{"ephemeral", func() error { return s.Create("/e", nil, true) }, nil},
		{"child of ephemeral", func() error { return s.Create("/e/c", nil, false) }, ErrNoChildrenForEphemerals},
		{"delete root", func() error { return s.Delete("/", -1) }, ErrInvalidPath},
	}
	for _, st := range steps {
		if err := st.do(); !errors.Is(err, st.want) || (st.want == nil && err != nil) {
			t.Fatalf("%s: got %v, want %v", st.name, err, st.want)
		}
	}

	// Versions: 0 after create, +1 per Set, CAS on the current version.
	data, v, err := s.Get("/a")
	if err != nil || string(data) != "x" || v != 0 {
		t.Fatalf("Get /a = %q v%d %v", data, v, err)
	}
	nv, err := s.Set("/a", []byte("x1"), 0)
	if err != nil || nv != 1 {
		t.Fatalf("Set v0 → %d %v", nv, err)
	}
	if _, err := s.Set("/a", []byte("stale"), 0); !errors.Is(err, ErrBadVersion) {
		t.Fatalf("stale CAS: %v", err)
	}
	if nv, err = s.Set("/a", []byte("x2"), AnyVersion); err != nil || nv != 2 {
		t.Fatalf("Set any → %d %v", nv, err)
	}
	kids, err := s.Children("/")
	if err != nil || !reflect.DeepEqual(kids, []string{"a", "e"}) {
		t.Fatalf("Children / = %v %v", kids, err)
	}
	if err := s.Delete("/a/b", 0); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Exists("/a/b"); ok {
		t.Fatal("/a/b still exists")
	}
	// Returned data is a copy.
	d, _, _ := s.Get("/a")
	d[0] = 'Q'
	if d2, _, _ := s.Get("/a"); string(d2) != "x2" {
		t.Fatalf("Get aliases store data: %q", d2)
	}
}

func TestEmbeddedPersistence(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenEmbeddedDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	must(t, CreateAll(s, "/brokers/topics/t", []byte(`{"version":2}`), false))
	must(t, s.Create("/bin", []byte{0xff, 0x00, 0xfe}, false))
	if _, err := s.Set("/brokers/topics/t", []byte(`{"version":3}`), 0); err != nil {
		t.Fatal(err)
	}
	must(t, CreateAll(s, "/brokers/ids/0", []byte("me"), true))
	seq, err := s.CreateSequential("/brokers/seq_", nil, false)
	if err != nil || seq != "/brokers/seq_0000000000" {
		t.Fatalf("seq %q %v", seq, err)
	}
	must(t, s.Close())
	if _, _, err := s.Get("/brokers/topics/t"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}

	s2, err := OpenEmbeddedDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	data, v, err := s2.Get("/brokers/topics/t")
	if err != nil || string(data) != `{"version":3}` || v != 1 {
		t.Fatalf("reopened /brokers/topics/t = %q v%d %v", data, v, err)
	}
	if b, _, _ := s2.Get("/bin"); !reflect.DeepEqual(b, []byte{0xff, 0x00, 0xfe}) {
		t.Fatalf("binary data round trip: %v", b)
	}
	if ok, _ := s2.Exists("/brokers/ids/0"); ok {
		t.Fatal("ephemeral survived reopen")
	}
	if ok, _ := s2.Exists("/brokers/ids"); !ok {
		t.Fatal("persistent parent of the ephemeral lost")
	}
	// The sequence counter survives too: numbers are never reused.
	if seq, _ := s2.CreateSequential("/brokers/seq_", nil, false); seq != "/brokers/seq_0000000001" {
		t.Fatalf("seq after reopen %q", seq)
	}
	// No temp files left behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != DBFileName {
		t.Fatalf("dir entries %v", ents)
	}
}

func TestEmbeddedCorruptSnapshot(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{`{not json`, `{"format":9,"nodes":{}}`, `{"format":1,"nodes":{"/a/b":{"version":0}}}`} {
		must(t, os.WriteFile(filepath.Join(dir, SnapshotFileName), []byte(content), 0o644))
		if _, err := OpenEmbeddedDir(dir); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: got %v, want ErrCorrupt", content, err)
		}
	}
}

func TestEmbeddedPersistFailureRollsBack(t *testing.T) {
	s, _ := openTemp(t)
	must(t, s.Create("/keep", []byte("k"), false))
	s.failCommit = func() error { return errors.New("injected disk failure") }
	if err := s.Create("/a", nil, false); err == nil {
		t.Fatal("create with a failing commit succeeded")
	}
	if ok, _ := s.Exists("/a"); ok {
		t.Fatal("failed create left the node in memory")
	}
	if _, err := s.Set("/keep", []byte("lost"), 0); err == nil {
		t.Fatal("set with a failing commit succeeded")
	}
	if d, v, _ := s.Get("/keep"); string(d) != "k" || v != 0 {
		t.Fatalf("/keep = %q v%d after a failed set", d, v)
	}
	// Ephemerals never touch the file.
	must(t, s.Create("/e", nil, true))
	// The store works again once the disk does.
	s.failCommit = nil
	must(t, s.Create("/a", []byte("a"), false))
}

func TestEmbeddedWatchesFireOnce(t *testing.T) {
	s, _ := openTemp(t)
	must(t, s.Create("/w", []byte("0"), false))
	_, _, dw, err := s.GetW("/w")
	must(t, err)
	_, cw, err := s.ChildrenW("/w")
	must(t, err)
	ok, ew, err := s.ExistsW("/later")
	must(t, err)
	if ok {
		t.Fatal("/later exists")
	}

	_, err = s.Set("/w", []byte("1"), -1)
	must(t, err)
	expect(t, dw, Event{EventNodeDataChanged, "/w"})
	_, err = s.Set("/w", []byte("2"), -1) // fired already: no second event
	must(t, err)
	expectClosed(t, dw)

	must(t, s.Create("/w/c", nil, false))
	expect(t, cw, Event{EventNodeChildrenChanged, "/w"})
	expectClosed(t, cw)

	must(t, s.Create("/later", nil, false))
	expect(t, ew, Event{EventNodeCreated, "/later"})

	_, _, dw2, err := s.GetW("/w/c")
	must(t, err)
	must(t, s.Delete("/w/c", -1))
	expect(t, dw2, Event{EventNodeDeleted, "/w/c"})

	_, pending, err := s.ChildrenW("/w")
	must(t, err)
	must(t, s.Close())
	expect(t, pending, Event{EventNotWatching, "/w"})
}

func TestEmbeddedCloseDeletesEphemeralsWithEvents(t *testing.T) {
	s, _ := openTemp(t)
	must(t, s.Create("/controller", []byte("c"), true))
	_, _, w, err := s.GetW("/controller")
	must(t, err)
	must(t, s.Close())
	expect(t, w, Event{EventNodeDeleted, "/controller"})
}

func TestHelpers(t *testing.T) {
	s, _ := openTemp(t)
	must(t, EnsurePath(s, "/x/y/z"))
	must(t, EnsurePath(s, "/x/y/z")) // idempotent
	if err := CreateAll(s, "/x/y/z", nil, false); !errors.Is(err, ErrNodeExists) {
		t.Fatalf("CreateAll existing: %v", err)
	}
	must(t, CreateAll(s, "/x/q/r", []byte("d"), false))
	must(t, DeleteRecursive(s, "/x"))
	if ok, _ := s.Exists("/x"); ok {
		t.Fatal("/x survived DeleteRecursive")
	}
	must(t, DeleteRecursive(s, "/x")) // missing is fine
	for in, want := range map[string]string{"/a/b": "/a", "/a": "/", "/": "/"} {
		if got := Parent(in); got != want {
			t.Errorf("Parent(%q)=%q want %q", in, got, want)
		}
	}
	if Join("/", "a", "b") != "/a/b" || Base("/a/b") != "b" {
		t.Error("Join/Base")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func expect(t *testing.T, ch <-chan Event, want Event) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Fatalf("event %+v, want %+v", got, want)
		}
	default:
		t.Fatalf("no event, want %+v", want) // events are delivered synchronously
	}
}

func expectClosed(t *testing.T, ch <-chan Event) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("second event %+v on a one-shot watch", ev)
		}
	default:
		t.Fatal("watch channel not closed after firing")
	}
}

func TestEmbeddedMultiRollbackOnPersistFailure(t *testing.T) {
	s, dir := openTemp(t)
	if err := s.Create("/a", []byte("1"), false); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := s.GetW("/a")
	must(t, err)
	s.failCommit = func() error { return errors.New("injected disk failure") }
	_, err = s.Multi(&SetOp{Path: "/a", Data: []byte("2"), Version: 0}, &CreateOp{Path: "/b"}, &CreateOp{Path: "/b/c"})
	if err == nil {
		t.Fatal("multi succeeded without a writable store")
	}
	data, v, _ := s.Get("/a")
	if string(data) != "1" || v != 0 {
		t.Fatalf("/a = %q v%d after a failed multi, want \"1\" v0", data, v)
	}
	if ok, _ := s.Exists("/b"); ok {
		t.Fatal("/b exists after a failed multi")
	}
	select {
	case ev := <-w:
		t.Fatalf("watch fired %v for a multi that failed", ev)
	default:
	}
	// Nothing of it reached the disk either.
	s.failCommit = nil
	must(t, s.Close())
	s2, err := OpenEmbeddedDir(dir)
	must(t, err)
	defer s2.Close()
	if data, v, _ := s2.Get("/a"); string(data) != "1" || v != 0 {
		t.Fatalf("reopened /a = %q v%d", data, v)
	}
	if ok, _ := s2.Exists("/b"); ok {
		t.Fatal("reopened: /b exists after a failed multi")
	}
}
