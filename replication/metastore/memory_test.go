package metastore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func recvEvent(t *testing.T, what string, ch <-chan Event) Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no event", what)
	}
	return Event{}
}

func recvSession(t *testing.T, ch <-chan SessionEvent) SessionEvent {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no session event")
	}
	return SessionEvent{}
}

// TestMemoryExpireWhileDisconnected: a session cut off and then expired by
// the ensemble loses its ephemerals at once (the others see them go), but
// it learns of the expiry only when it reconnects: Disconnected, then on
// Reconnect Expired, NotWatching, Established, as go-zookeeper reports it.
func TestMemoryExpireWhileDisconnected(t *testing.T) {
	m := NewMemory()
	a, b := m.Open(), m.Open()
	defer a.Close()
	defer b.Close()
	events := make(chan SessionEvent, 16)
	defer a.OnSession(func(ev SessionEvent) { events <- ev })()
	if err := a.Create("/e", nil, true); err != nil {
		t.Fatal(err)
	}
	_, w, err := a.ExistsW("/e")
	if err != nil {
		t.Fatal(err)
	}
	_, _, gone, err := b.GetW("/e")
	if err != nil {
		t.Fatal(err)
	}
	old := a.SessionID()
	a.Disconnect()
	if ev := recvSession(t, events); ev != (SessionEvent{SessionDisconnected, old}) {
		t.Fatalf("first event %+v, want Disconnected 0x%x", ev, old)
	}
	a.Expire()
	if ev := recvEvent(t, "observer", gone); ev.Type != EventNodeDeleted {
		t.Fatalf("observer got %v, want NodeDeleted", ev.Type)
	}
	select {
	case ev := <-w:
		t.Fatalf("the disconnected session heard %v before reconnecting", ev.Type)
	case ev := <-events:
		t.Fatalf("the disconnected session heard %v before reconnecting", ev.State)
	default:
	}
	if _, err := a.Exists("/e"); !errors.Is(err, ErrConnectionLoss) {
		t.Fatalf("call while disconnected: %v, want ErrConnectionLoss", err)
	}
	a.Reconnect()
	if ev := recvSession(t, events); ev != (SessionEvent{SessionExpired, old}) {
		t.Fatalf("after reconnect: %+v, want Expired 0x%x", ev, old)
	}
	if ev := recvEvent(t, "own watch", w); ev.Type != EventNotWatching {
		t.Fatalf("own watch got %v, want NotWatching", ev.Type)
	}
	est := recvSession(t, events)
	if est.State != SessionEstablished || est.SessionID <= old || est.SessionID != a.SessionID() {
		t.Fatalf("then %+v (SessionID %x), want Established with a new id", est, a.SessionID())
	}
	if err := a.Create("/e", nil, true); err != nil {
		t.Fatalf("re-create in the new session: %v", err)
	}
}

// TestMemoryEphemeralOwnership: ephemerals belong to the session that made
// them, through Create, CreateSequential and Multi alike; expiring one
// session leaves another's untouched.
func TestMemoryEphemeralOwnership(t *testing.T) {
	m := NewMemory()
	a, b := m.Open(), m.Open()
	defer a.Close()
	defer b.Close()
	if err := a.Create("/ids", nil, false); err != nil {
		t.Fatal(err)
	}
	if err := a.Create("/ids/a", nil, true); err != nil {
		t.Fatal(err)
	}
	seq, err := a.CreateSequential("/ids/s_", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Multi(&CreateOp{Path: "/ids/m", Ephemeral: true}, &CreateOp{Path: "/persist"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Create("/ids/b", nil, true); err != nil {
		t.Fatal(err)
	}
	a.Expire()
	kids, err := b.Children("/ids")
	if err != nil || len(kids) != 1 || kids[0] != "b" {
		t.Fatalf("children after a's expiry = %v, %v; want [b] (%s gone too)", kids, err, seq)
	}
	if ok, _ := b.Exists("/persist"); !ok {
		t.Fatal("a persistent node created in a Multi vanished with the session")
	}
	if d, want := m.Dump(), fmt.Sprintf("/ids/b (v0 ephemeral 0x%x) \n", b.SessionID()); !strings.Contains(d, want) || strings.Count(d, "\n") != 4 {
		t.Fatalf("Dump =\n%s\nwant 4 lines (/, /ids, /ids/b, /persist) with %q", d, want)
	}
	b.Close()
	if kids, _ := a.Children("/ids"); len(kids) != 0 {
		t.Fatalf("children after b closed = %v, want none", kids)
	}
	if _, err := b.Children("/ids"); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed session: %v, want ErrClosed", err)
	}
}

// TestMemoryChanged: Changed's channel closes at the next change and not before.
func TestMemoryChanged(t *testing.T) {
	m := NewMemory()
	s := m.Open()
	defer s.Close()
	ch := m.Changed()
	if _, err := s.Exists("/a"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("a read closed Changed")
	default:
	}
	if err := s.Create("/a", nil, false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("Create did not close Changed")
	}
	if m.Changed() == ch {
		t.Fatal("Changed returned the closed channel again")
	}
}

// TestMemoryCloseWhileDisconnected: a handle closed while cut off (a
// process killed while ZooKeeper still holds its session) leaves its
// ephemerals until the session expires.
func TestMemoryCloseWhileDisconnected(t *testing.T) {
	m := NewMemory()
	a, b := m.Open(), m.Open()
	defer b.Close()
	if err := a.Create("/e", nil, true); err != nil {
		t.Fatal(err)
	}
	a.Disconnect()
	a.Close()
	if ok, _ := b.Exists("/e"); !ok {
		t.Fatal("ephemeral gone at a Close that could not reach the ensemble")
	}
	_, _, gone, err := b.GetW("/e")
	if err != nil {
		t.Fatal(err)
	}
	a.Expire()
	if ev := recvEvent(t, "observer", gone); ev.Type != EventNodeDeleted {
		t.Fatalf("observer got %v, want NodeDeleted", ev.Type)
	}
}
