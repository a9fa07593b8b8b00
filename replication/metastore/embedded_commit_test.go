package metastore

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func (e *Embedded) commitCount() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.commits
}

func (e *Embedded) queued() int {
	e.qmu.Lock()
	defer e.qmu.Unlock()
	return len(e.queue)
}

// Writers that arrive while a commit is on disk share the next one, and
// none returns before its change is committed.
func TestEmbeddedGroupCommit(t *testing.T) {
	s, dir := openTemp(t)
	entered, release := make(chan struct{}), make(chan struct{})
	first := true
	s.failCommit = func() error { // runs on the committer, e.mu held
		if first {
			first = false
			close(entered)
			<-release
		}
		return nil
	}
	firstDone := make(chan error, 1)
	go func() { firstDone <- s.Create("/first", nil, false) }()
	<-entered

	const n = 40
	var wg sync.WaitGroup
	errs := make([]error, n)
	returned := make(chan int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Create(fmt.Sprintf("/w%02d", i), []byte{byte(i)}, false)
			returned <- i
		}()
	}
	// Wait (bounded) until all n are queued behind the blocked commit.
	deadline := time.Now().Add(10 * time.Second)
	for s.queued() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d writes queued", s.queued(), n)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case i := <-returned:
		t.Fatalf("write %d returned before any commit", i)
	default:
	}
	close(release)
	must(t, <-firstDone)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if c := s.commitCount(); c != 2 {
		t.Fatalf("%d commits for 1 + %d queued writes, want 2 (the queued ones share one)", c, n)
	}
	s.failCommit = nil
	must(t, s.Close())
	s2, err := OpenEmbeddedDir(dir)
	must(t, err)
	defer s2.Close()
	for i := range n {
		if d, _, err := s2.Get(fmt.Sprintf("/w%02d", i)); err != nil || len(d) != 1 || d[0] != byte(i) {
			t.Fatalf("/w%02d after reopen = %v %v", i, d, err)
		}
	}
}

// In one commit each write is checked against the writes before it; a
// failed check fails alone, and the others land.
func TestEmbeddedBatchChecksInOrder(t *testing.T) {
	s, _ := openTemp(t)
	must(t, s.Create("/a", []byte("0"), false))
	entered, release := make(chan struct{}), make(chan struct{})
	first := true
	s.failCommit = func() error {
		if first {
			first = false
			close(entered)
			<-release
		}
		return nil
	}
	go func() { _ = s.Create("/block", nil, false) }()
	<-entered
	// Queued in this order behind the blocked commit: Set v0 then Set v0
	// again (stale once the first applied), a create and its duplicate.
	type res struct {
		i   int
		err error
	}
	out := make(chan res, 4)
	steps := []func() error{
		func() error { _, err := s.Set("/a", []byte("1"), 0); return err },
		func() error { _, err := s.Set("/a", []byte("stale"), 0); return err },
		func() error { return s.Create("/b", nil, false) },
		func() error { return s.Create("/b", nil, false) },
	}
	for i, st := range steps {
		go func() { out <- res{i, st()} }()
		// Queue them one at a time so their order is known.
		deadline := time.Now().Add(10 * time.Second)
		for s.queued() < i+1 {
			if time.Now().After(deadline) {
				t.Fatal("write not queued")
			}
			time.Sleep(time.Millisecond)
		}
	}
	close(release)
	got := make([]error, 4)
	for range 4 {
		r := <-out
		got[r.i] = r.err
	}
	if got[0] != nil || !errors.Is(got[1], ErrBadVersion) || got[2] != nil || !errors.Is(got[3], ErrNodeExists) {
		t.Fatalf("results %v, want [nil BadVersion nil NodeExists]", got)
	}
	if d, v, _ := s.Get("/a"); string(d) != "1" || v != 1 {
		t.Fatalf("/a = %q v%d", d, v)
	}
}

func TestEmbeddedWritesAfterCloseFail(t *testing.T) {
	s, _ := openTemp(t)
	must(t, s.Close())
	if err := s.Create("/a", nil, false); !errors.Is(err, ErrClosed) {
		t.Fatalf("create after close: %v", err)
	}
	if _, err := s.Multi(&CreateOp{Path: "/a"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("multi after close: %v", err)
	}
	must(t, s.Close()) // idempotent
}

func TestEmbeddedPathTooLongForKey(t *testing.T) {
	s, _ := openTemp(t)
	long := "/" + fmt.Sprintf("%040000d", 0)
	if err := s.Create(long, nil, false); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("create of a %d-byte path: %v", len(long), err)
	}
	var me *MultiError
	if _, err := s.Multi(&CreateOp{Path: "/ok"}, &CreateOp{Path: long}); !errors.As(err, &me) || me.Index != 1 || !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("multi with a %d-byte path: %v", len(long), err)
	}
	if ok, _ := s.Exists("/ok"); ok {
		t.Fatal("multi partly applied")
	}
	// An ephemeral is never stored: no limit beyond memory.
	must(t, s.Create(long, nil, true))
}
