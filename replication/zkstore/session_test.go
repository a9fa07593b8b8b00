package zkstore

import (
	"fmt"
	"testing"
	"time"

	"gregor/replication/metastore"
	"gregor/replication/metastore/storetest"
	"gregor/test/zkharness"
)

// awaitSession waits for the next session event of the wanted state,
// skipping Disconnected/Reconnected noise.
func awaitSession(t *testing.T, ch <-chan metastore.SessionEvent, want metastore.SessionState, within time.Duration) metastore.SessionEvent {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev := <-ch:
			if ev.State == want {
				return ev
			}
			if ev.State == metastore.SessionExpired || ev.State == metastore.SessionEstablished {
				t.Fatalf("session event %v while waiting for %v", ev.State, want)
			}
		case <-deadline:
			t.Fatalf("no %v session event within %v", want, within)
		}
	}
}

// TestSessionExpiryThroughProxy cuts the broker's connection long enough
// for ZooKeeper to expire the session, then heals it: the store reports
// Expired then Established with a new session id, the ephemeral node is
// gone and can be re-created, and the old watch reports NotWatching.
func TestSessionExpiryThroughProxy(t *testing.T) {
	zkSrv := server(t)
	chroot := freshChroot()
	proxy := zkharness.NewProxy(t, zkSrv.Addr())
	const sessionTimeout = 2 * time.Second // tickTime 500ms: granted as asked
	s := openT(t, proxy.Addr()+chroot, sessionTimeout)
	observer := openT(t, zkSrv.Addr()+chroot, 4*time.Second)

	events := make(chan metastore.SessionEvent, 64)
	remove := s.OnSession(func(ev metastore.SessionEvent) { events <- ev })
	defer remove()

	if err := s.Create("/ids", nil, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Create("/ids/1", []byte("first"), true); err != nil {
		t.Fatal(err)
	}
	oldSession := s.SessionID()
	_, _, ownWatch, err := s.GetW("/ids")
	if err != nil {
		t.Fatal(err)
	}
	_, _, gone, err := observer.GetW("/ids/1")
	if err != nil {
		t.Fatal(err)
	}

	proxy.Pause()
	// The server expires the session after its timeout: the observer sees
	// the ephemeral deleted.
	select {
	case ev := <-gone:
		if ev.Type != metastore.EventNodeDeleted {
			t.Fatalf("observer event %v, want NodeDeleted", ev.Type)
		}
	case <-time.After(5 * sessionTimeout):
		t.Fatal("ephemeral still present 5 session timeouts after the cut")
	}
	proxy.Resume()

	exp := awaitSession(t, events, metastore.SessionExpired, 20*time.Second)
	if exp.SessionID != oldSession {
		t.Fatalf("expired session id 0x%x, want the old 0x%x", exp.SessionID, oldSession)
	}
	est := awaitSession(t, events, metastore.SessionEstablished, 20*time.Second)
	if est.SessionID == 0 || est.SessionID == oldSession {
		t.Fatalf("new session id 0x%x, old 0x%x: want a different, non-zero id", est.SessionID, oldSession)
	}
	select {
	case ev := <-ownWatch:
		if ev.Type != metastore.EventNotWatching {
			t.Fatalf("watch across expiry got %v, want NotWatching", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch armed before the expiry never fired")
	}
	// Re-registration in the new session.
	if err := s.Create("/ids/1", []byte("second"), true); err != nil {
		t.Fatalf("re-create ephemeral after expiry: %v", err)
	}
	data, _, err := observer.Get("/ids/1")
	if err != nil || string(data) != "second" {
		t.Fatalf("observer reads %q, %v; want \"second\"", data, err)
	}
}

// TestReconnectKeepsSession: a server restart shorter than the session
// timeout is a reconnect, not an expiry; the ephemeral survives.
func TestReconnectKeepsSession(t *testing.T) {
	zkSrv := server(t)
	chroot := freshChroot()
	proxy := zkharness.NewProxy(t, zkSrv.Addr())
	s := openT(t, proxy.Addr()+chroot, 8*time.Second)
	events := make(chan metastore.SessionEvent, 64)
	defer s.OnSession(func(ev metastore.SessionEvent) { events <- ev })()
	if err := s.Create("/e", nil, true); err != nil {
		t.Fatal(err)
	}
	id := s.SessionID()
	proxy.Pause()
	awaitSession(t, events, metastore.SessionDisconnected, 20*time.Second)
	proxy.Resume()
	rec := awaitSession(t, events, metastore.SessionReconnected, 20*time.Second)
	if rec.SessionID != id {
		t.Fatalf("reconnected with session 0x%x, want 0x%x", rec.SessionID, id)
	}
	if ok, err := s.Exists("/e"); err != nil || !ok {
		t.Fatalf("ephemeral after reconnect: %v, %v", ok, err)
	}
}

// zkSessions drives storetest's session cases over a real ZooKeeper: each
// session has its own proxy, so one can be cut off (Disconnect) or kept
// cut off until the server expires it (Expire).
type zkSessions struct {
	addr    string // server address
	chroot  string // one per case
	proxies map[metastore.Store]*zkharness.Proxy
	n       int
}

// zkSessionTimeout is long enough for a Disconnect case to reconnect
// within it and short enough for an Expire to take a few seconds.
const zkSessionTimeout = 4 * time.Second

func (x *zkSessions) Open(t *testing.T) metastore.Store {
	px := zkharness.NewProxy(t, x.addr)
	s := openT(t, px.Addr()+x.chroot, zkSessionTimeout)
	x.proxies[s] = px
	return s
}

// Expire cuts s off until the server has expired its session, seen by an
// observer as the deletion of a marker ephemeral s created first.
func (x *zkSessions) Expire(t *testing.T, s metastore.Store) {
	t.Helper()
	x.n++
	marker := fmt.Sprintf("/expire-marker-%d", x.n)
	if err := s.Create(marker, nil, true); err != nil {
		t.Fatal(err)
	}
	observer := openT(t, x.addr+x.chroot, zkSessionTimeout)
	_, _, gone, err := observer.GetW(marker)
	if err != nil {
		t.Fatal(err)
	}
	px := x.proxies[s]
	px.Pause()
	select {
	case ev := <-gone:
		if ev.Type != metastore.EventNodeDeleted {
			t.Fatalf("marker watch: %v, want NodeDeleted", ev.Type)
		}
	case <-time.After(5 * zkSessionTimeout):
		t.Fatal("session not expired 5 session timeouts after the cut")
	}
	px.Resume()
}

func (x *zkSessions) Disconnect(t *testing.T, s metastore.Store) { x.proxies[s].Pause() }
func (x *zkSessions) Reconnect(t *testing.T, s metastore.Store)  { x.proxies[s].Resume() }

func TestSessionConformance(t *testing.T) {
	addr := server(t).Addr()
	storetest.RunSessions(t, func(t *testing.T) storetest.Sessions {
		return &zkSessions{addr: addr, chroot: freshChroot(), proxies: map[metastore.Store]*zkharness.Proxy{}}
	})
}
