// Package storetest is a conformance suite for metastore.Store
// implementations: the same ZooKeeper semantics (versions, CAS, sequential
// names, one-shot watches, atomic Multi) are asserted against the embedded
// store and against a real ZooKeeper through zkstore.
package storetest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"gregor/replication/metastore"
)

// WatchTimeout bounds how long the suite waits for a watch to fire.
const WatchTimeout = 10 * time.Second

// Run runs the suite. newStore returns a handle on a fresh, empty tree
// (only "/" exists) and arranges for it to be closed at the test's end.
func Run(t *testing.T, newStore func(t *testing.T) metastore.Store) {
	t.Run("CRUD", func(t *testing.T) { testCRUD(t, newStore(t)) })
	t.Run("Sequential", func(t *testing.T) { testSequential(t, newStore(t)) })
	t.Run("Watches", func(t *testing.T) { testWatches(t, newStore(t)) })
	t.Run("Multi", func(t *testing.T) { testMulti(t, newStore(t)) })
	t.Run("Ephemeral", func(t *testing.T) { testEphemeral(t, newStore(t)) })
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", what, err, want)
	}
}

func testCRUD(t *testing.T, s metastore.Store) {
	wantErr(t, "create without parent", s.Create("/a/b", nil, false), metastore.ErrNoNode)
	must(t, s.Create("/a", []byte("x"), false))
	wantErr(t, "create twice", s.Create("/a", nil, false), metastore.ErrNodeExists)
	wantErr(t, "bad path", s.Create("/a/", nil, false), metastore.ErrInvalidPath)
	wantErr(t, "relative path", s.Create("a", nil, false), metastore.ErrInvalidPath)
	must(t, s.Create("/a/b", []byte("y"), false))
	must(t, s.Create("/a/c", nil, false))

	data, v, err := s.Get("/a")
	must(t, err)
	if string(data) != "x" || v != 0 {
		t.Fatalf("get /a = %q v%d, want \"x\" v0", data, v)
	}
	_, _, err = s.Get("/nope")
	wantErr(t, "get missing", err, metastore.ErrNoNode)

	_, err = s.Set("/a", []byte("z"), 5)
	wantErr(t, "set wrong version", err, metastore.ErrBadVersion)
	nv, err := s.Set("/a", []byte("z"), 0)
	must(t, err)
	if nv != 1 {
		t.Fatalf("set version = %d, want 1", nv)
	}
	nv, err = s.Set("/a", []byte("w"), metastore.AnyVersion)
	must(t, err)
	if nv != 2 {
		t.Fatalf("unconditional set version = %d, want 2", nv)
	}
	_, err = s.Set("/nope", nil, metastore.AnyVersion)
	wantErr(t, "set missing", err, metastore.ErrNoNode)

	kids, err := s.Children("/a")
	must(t, err)
	if !reflect.DeepEqual(kids, []string{"b", "c"}) {
		t.Fatalf("children = %v, want [b c]", kids)
	}
	_, err = s.Children("/nope")
	wantErr(t, "children missing", err, metastore.ErrNoNode)

	wantErr(t, "delete non-empty", s.Delete("/a", metastore.AnyVersion), metastore.ErrNotEmpty)
	wantErr(t, "delete wrong version", s.Delete("/a/b", 3), metastore.ErrBadVersion)
	must(t, s.Delete("/a/b", 0))
	wantErr(t, "delete missing", s.Delete("/a/b", metastore.AnyVersion), metastore.ErrNoNode)
	ok, err := s.Exists("/a/b")
	must(t, err)
	if ok {
		t.Fatal("/a/b exists after delete")
	}

	// Binary data survives as is.
	bin := []byte{0, 1, 0xff, 0xfe}
	must(t, s.Create("/bin", bin, false))
	got, _, err := s.Get("/bin")
	must(t, err)
	if !reflect.DeepEqual(got, bin) {
		t.Fatalf("binary data = %v, want %v", got, bin)
	}

	must(t, metastore.CreateAll(s, "/x/y/z", []byte("deep"), false))
	must(t, metastore.DeleteRecursive(s, "/x"))
	ok, err = s.Exists("/x")
	must(t, err)
	if ok {
		t.Fatal("/x exists after DeleteRecursive")
	}
}

func testSequential(t *testing.T, s metastore.Store) {
	must(t, s.Create("/seq", nil, false))
	var got []string
	for i := 0; i < 3; i++ {
		p, err := s.CreateSequential("/seq/change_", []byte("d"), false)
		must(t, err)
		got = append(got, p)
	}
	want := []string{"/seq/change_0000000000", "/seq/change_0000000001", "/seq/change_0000000002"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sequential paths = %v, want %v", got, want)
	}
	_, err := s.CreateSequential("/missing/change_", nil, false)
	wantErr(t, "sequential without parent", err, metastore.ErrNoNode)
}

func await(t *testing.T, what string, ch <-chan metastore.Event, want metastore.Event) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("%s: watch closed without an event", what)
		}
		if ev != want {
			t.Fatalf("%s: event %v %s, want %v %s", what, ev.Type, ev.Path, want.Type, want.Path)
		}
	case <-time.After(WatchTimeout):
		t.Fatalf("%s: no event within %v", what, WatchTimeout)
	}
	// One-shot: the channel is closed after its event.
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatalf("%s: second event on a one-shot watch", what)
		}
	case <-time.After(WatchTimeout):
		t.Fatalf("%s: watch channel not closed after its event", what)
	}
}

func testWatches(t *testing.T, s metastore.Store) {
	must(t, s.Create("/w", []byte("1"), false))

	_, _, dataW, err := s.GetW("/w")
	must(t, err)
	_, err = s.Set("/w", []byte("2"), metastore.AnyVersion)
	must(t, err)
	await(t, "GetW after Set", dataW, metastore.Event{Type: metastore.EventNodeDataChanged, Path: "/w"})

	_, childW, err := s.ChildrenW("/w")
	must(t, err)
	must(t, s.Create("/w/k", nil, false))
	await(t, "ChildrenW after Create", childW, metastore.Event{Type: metastore.EventNodeChildrenChanged, Path: "/w"})

	ok, existsW, err := s.ExistsW("/w/later")
	must(t, err)
	if ok {
		t.Fatal("/w/later exists")
	}
	must(t, s.Create("/w/later", nil, false))
	await(t, "ExistsW after Create", existsW, metastore.Event{Type: metastore.EventNodeCreated, Path: "/w/later"})

	_, _, delW, err := s.GetW("/w/later")
	must(t, err)
	must(t, s.Delete("/w/later", metastore.AnyVersion))
	await(t, "GetW after Delete", delW, metastore.Event{Type: metastore.EventNodeDeleted, Path: "/w/later"})

	_, _, _, err = s.GetW("/nope")
	wantErr(t, "GetW missing", err, metastore.ErrNoNode)
}

func testMulti(t *testing.T, s metastore.Store) {
	must(t, s.Create("/epoch", []byte("1"), false))
	must(t, s.Create("/state", []byte("a"), false))

	// Fenced: a stale check fails the whole transaction and nothing applies.
	_, err := s.Multi(
		&metastore.CheckVersionOp{Path: "/epoch", Version: 7},
		&metastore.SetOp{Path: "/state", Data: []byte("stale"), Version: metastore.AnyVersion},
		&metastore.CreateOp{Path: "/new", Data: []byte("n")},
	)
	wantErr(t, "stale check", err, metastore.ErrBadVersion)
	var me *metastore.MultiError
	if !errors.As(err, &me) || me.Index != 0 || me.Path != "/epoch" {
		t.Fatalf("stale check: err = %#v, want MultiError at op 0 on /epoch", err)
	}
	data, v, err := s.Get("/state")
	must(t, err)
	if string(data) != "a" || v != 0 {
		t.Fatalf("after failed multi: /state = %q v%d, want \"a\" v0", data, v)
	}
	if ok, _ := s.Exists("/new"); ok {
		t.Fatal("failed multi created /new")
	}

	// A later op failing undoes the earlier ones too.
	_, err = s.Multi(
		&metastore.SetOp{Path: "/state", Data: []byte("b"), Version: 0},
		&metastore.DeleteOp{Path: "/missing", Version: metastore.AnyVersion},
	)
	wantErr(t, "second op missing", err, metastore.ErrNoNode)
	if !errors.As(err, &me) || me.Index != 1 {
		t.Fatalf("second op missing: err = %v, want MultiError at op 1", err)
	}
	if data, _, _ := s.Get("/state"); string(data) != "a" {
		t.Fatalf("failed multi changed /state to %q", data)
	}

	_, _, w, err := s.GetW("/state")
	must(t, err)
	res, err := s.Multi(
		&metastore.CheckVersionOp{Path: "/epoch", Version: 0},
		&metastore.SetOp{Path: "/state", Data: []byte("b"), Version: 0},
		&metastore.CreateOp{Path: "/new", Data: []byte("n")},
		&metastore.CreateOp{Path: "/new/child", Data: []byte("c")},
		&metastore.DeleteOp{Path: "/new/child", Version: 0},
	)
	must(t, err)
	want := []metastore.OpResult{{Path: "/epoch", Version: 0}, {Path: "/state", Version: 1}, {Path: "/new"}, {Path: "/new/child"}, {Path: "/new/child"}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("multi results = %+v, want %+v", res, want)
	}
	data, v, err = s.Get("/state")
	must(t, err)
	if string(data) != "b" || v != 1 {
		t.Fatalf("after multi: /state = %q v%d, want \"b\" v1", data, v)
	}
	if data, _, err := s.Get("/new"); err != nil || string(data) != "n" {
		t.Fatalf("after multi: /new = %q, %v", data, err)
	}
	if ok, _ := s.Exists("/new/child"); ok {
		t.Fatal("/new/child exists after create+delete in one multi")
	}
	await(t, "GetW after multi", w, metastore.Event{Type: metastore.EventNodeDataChanged, Path: "/state"})
}

func testEphemeral(t *testing.T, s metastore.Store) {
	must(t, s.Create("/ids", nil, false))
	must(t, s.Create("/ids/1", []byte(`{"host":"h"}`), true))
	wantErr(t, "ephemeral twice", s.Create("/ids/1", nil, true), metastore.ErrNodeExists)
	err := s.Create("/ids/1/child", nil, false)
	if err == nil || !(errors.Is(err, metastore.ErrNoChildrenForEphemerals)) {
		t.Fatalf("child of ephemeral: err = %v, want ErrNoChildrenForEphemerals", err)
	}
	p, err := s.CreateSequential("/ids/e_", nil, true)
	must(t, err)
	if !strings.HasPrefix(p, "/ids/e_") || len(p) != len("/ids/e_")+10 {
		t.Fatalf("ephemeral sequential path = %q", p)
	}
}
