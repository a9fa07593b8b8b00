package storetest

import (
	"errors"
	"testing"
	"time"

	"gregor/replication/metastore"
)

// Sessions gives the session cases several sessions on one tree and the
// faults to inject into one of them. Implementations: the in-memory
// ensemble (metastore.Memory) and zkstore behind a pausable proxy.
type Sessions interface {
	// Open returns a new session on the shared tree (fresh for each case:
	// only "/" exists when the first session opens), closed at the test's end.
	Open(t *testing.T) metastore.Store
	// Expire makes the ensemble expire s's session and returns once it has
	// (s's ephemeral nodes are gone); s may learn of it later.
	Expire(t *testing.T, s metastore.Store)
	// Disconnect cuts s off the ensemble, for less than its session timeout.
	Disconnect(t *testing.T, s metastore.Store)
	// Reconnect ends a Disconnect.
	Reconnect(t *testing.T, s metastore.Store)
}

// sessionIDer is the SessionID accessor both stores with sessions have.
type sessionIDer interface{ SessionID() int64 }

// RunSessions runs the session cases: expiry, a short disconnect, and
// Close, each with a second session observing.
func RunSessions(t *testing.T, newSessions func(t *testing.T) Sessions) {
	t.Run("Expiry", func(t *testing.T) { testExpiry(t, newSessions(t)) })
	t.Run("Disconnect", func(t *testing.T) { testDisconnect(t, newSessions(t)) })
	t.Run("CloseEndsSession", func(t *testing.T) { testCloseEndsSession(t, newSessions(t)) })
}

// watchSessions records s's session events.
func watchSessions(t *testing.T, s metastore.Store) <-chan metastore.SessionEvent {
	ch := make(chan metastore.SessionEvent, 64)
	remove := s.OnSession(func(ev metastore.SessionEvent) { ch <- ev })
	t.Cleanup(remove)
	return ch
}

// awaitState waits for the next session event in state want. Only
// Disconnected may come before it (go-zookeeper reports one ahead of an
// expiry); any other state first fails the test.
func awaitState(t *testing.T, ch <-chan metastore.SessionEvent, want metastore.SessionState) metastore.SessionEvent {
	t.Helper()
	deadline := time.After(3 * WatchTimeout)
	for {
		select {
		case ev := <-ch:
			if ev.State == want {
				return ev
			}
			if ev.State != metastore.SessionDisconnected {
				t.Fatalf("session event %v while waiting for %v", ev.State, want)
			}
		case <-deadline:
			t.Fatalf("no %v session event within %v", want, 3*WatchTimeout)
		}
	}
}

func sessionID(t *testing.T, s metastore.Store) int64 {
	t.Helper()
	si, ok := s.(sessionIDer)
	if !ok {
		t.Fatalf("%T has no SessionID method", s)
	}
	return si.SessionID()
}

func testExpiry(t *testing.T, sx Sessions) {
	a := sx.Open(t)
	b := sx.Open(t)
	events := watchSessions(t, a)
	must(t, a.Create("/ids", nil, false))
	must(t, a.Create("/ids/1", []byte("first"), true))
	wantErr(t, "second session takes the ephemeral", b.Create("/ids/1", nil, true), metastore.ErrNodeExists)
	oldID := sessionID(t, a)
	_, _, own, err := a.GetW("/ids")
	must(t, err)
	_, _, gone, err := b.GetW("/ids/1")
	must(t, err)

	sx.Expire(t, a)
	await(t, "observer's watch on the expired ephemeral", gone, metastore.Event{Type: metastore.EventNodeDeleted, Path: "/ids/1"})
	if ok, err := b.Exists("/ids/1"); err != nil || ok {
		t.Fatalf("ephemeral after expiry: exists=%v err=%v", ok, err)
	}
	exp := awaitState(t, events, metastore.SessionExpired)
	if exp.SessionID != oldID {
		t.Fatalf("Expired names session 0x%x, want the old 0x%x", exp.SessionID, oldID)
	}
	est := awaitState(t, events, metastore.SessionEstablished)
	if est.SessionID == 0 || est.SessionID == oldID {
		t.Fatalf("Established with session 0x%x (old 0x%x): want a new, non-zero id", est.SessionID, oldID)
	}
	await(t, "own watch across the expiry", own, metastore.Event{Type: metastore.EventNotWatching, Path: "/ids"})
	// The owner re-registers in its new session, as a broker does.
	must(t, a.Create("/ids/1", []byte("second"), true))
	data, _, err := b.Get("/ids/1")
	must(t, err)
	if string(data) != "second" {
		t.Fatalf("observer reads %q, want \"second\"", data)
	}
	if id := sessionID(t, a); id != est.SessionID {
		t.Fatalf("SessionID() = 0x%x after Established 0x%x", id, est.SessionID)
	}
}

func testDisconnect(t *testing.T, sx Sessions) {
	a := sx.Open(t)
	b := sx.Open(t)
	events := watchSessions(t, a)
	must(t, a.Create("/w", []byte("1"), false))
	must(t, a.Create("/e", nil, true))
	id := sessionID(t, a)
	_, _, w, err := a.GetW("/w")
	must(t, err)

	sx.Disconnect(t, a)
	if ev := awaitState(t, events, metastore.SessionDisconnected); ev.SessionID != id {
		t.Fatalf("Disconnected names session 0x%x, want 0x%x", ev.SessionID, id)
	}
	_, _, err = a.Get("/w")
	wantErr(t, "Get while disconnected", err, metastore.ErrConnectionLoss)
	// A change while a is away: its watch fires once it is back.
	_, err = b.Set("/w", []byte("2"), metastore.AnyVersion)
	must(t, err)

	sx.Reconnect(t, a)
	if ev := awaitState(t, events, metastore.SessionReconnected); ev.SessionID != id {
		t.Fatalf("Reconnected with session 0x%x, want the same 0x%x", ev.SessionID, id)
	}
	await(t, "watch across a short disconnect", w, metastore.Event{Type: metastore.EventNodeDataChanged, Path: "/w"})
	if ok, err := b.Exists("/e"); err != nil || !ok {
		t.Fatalf("ephemeral after a short disconnect: exists=%v err=%v", ok, err)
	}
	data, _, err := a.Get("/w")
	must(t, err)
	if string(data) != "2" {
		t.Fatalf("Get after reconnect = %q, want \"2\"", data)
	}
}

func testCloseEndsSession(t *testing.T, sx Sessions) {
	a := sx.Open(t)
	b := sx.Open(t)
	must(t, a.Create("/ids", nil, false))
	must(t, a.Create("/ids/1", nil, true))
	_, _, gone, err := b.GetW("/ids/1")
	must(t, err)
	_, _, pending, err := a.GetW("/ids")
	must(t, err)
	must(t, a.Close())
	await(t, "owner's pending watch after Close", pending, metastore.Event{Type: metastore.EventNotWatching, Path: "/ids"})
	await(t, "observer's watch on the closed session's ephemeral", gone, metastore.Event{Type: metastore.EventNodeDeleted, Path: "/ids/1"})
	if _, _, err := a.Get("/ids"); !errors.Is(err, metastore.ErrClosed) {
		t.Fatalf("Get after Close: err = %v, want ErrClosed", err)
	}
}
