package server

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
)

// The socket server keys of server.properties reach the server's Config.
func TestConfigFromBrokerSocketKeys(t *testing.T) {
	b, err := config.Parse(map[string]string{
		"connections.max.idle.ms":                   "1234",
		"connection.failed.authentication.delay.ms": "77",
		"socket.listen.backlog.size":                "9",
		"queued.max.request.bytes":                  "209715200",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := ConfigFromBroker(b)
	if sc.ConnectionsMaxIdle != 1234*time.Millisecond || sc.FailedAuthenticationDelay != 77*time.Millisecond ||
		sc.ListenBacklog != 9 || sc.QueuedMaxRequestBytes != 209715200 {
		t.Fatalf("server config %+v", sc)
	}
	d, _ := config.Parse(map[string]string{}, nil)
	sc = ConfigFromBroker(d)
	if sc.ConnectionsMaxIdle != 10*time.Minute || sc.FailedAuthenticationDelay != 100*time.Millisecond ||
		sc.ListenBacklog != 50 || sc.QueuedMaxRequestBytes != -1 {
		t.Fatalf("defaults %+v", sc)
	}
	n, _ := config.Parse(map[string]string{"connections.max.idle.ms": "-1"}, nil)
	if sc := ConfigFromBroker(n); sc.ConnectionsMaxIdle != 0 {
		t.Fatalf("negative idle = never, got %v", sc.ConnectionsMaxIdle)
	}
}

// socket.listen.backlog.size is listen(2)'s backlog: with the listener
// bound and nothing accepting, the kernel completes at most backlog+1
// connections and drops the SYNs after them, where Go's default
// (somaxconn) would let them all in.
func TestListenBacklog(t *testing.T) {
	completed := func(backlog, tries int) int {
		t.Helper()
		s := New(Config{Listeners: []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}, ListenBacklog: backlog}, &fakeDispatcher{}, nil)
		defer s.Close()
		if err := s.Listen(); err != nil { // bound, not accepting
			t.Fatal(err)
		}
		addr := s.Addrs()[0].String()
		n := 0
		for range tries {
			c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
			if err != nil {
				break
			}
			defer c.Close()
			n++
		}
		return n
	}
	if n := completed(2, 8); n < 1 || n > 3 {
		t.Fatalf("backlog 2: %d connections completed without accept; want at most 3", n)
	}
	if n := completed(0, 8); n != 8 {
		t.Fatalf("Go's default backlog: %d of 8 connections completed", n)
	}
}

// The backlog path keeps net.Listen's behaviour: an empty host is dual
// stack, the listener serves, a taken port is an error naming it.
func TestListenBacklogServes(t *testing.T) {
	e := startServer(t, func(c *Config) {
		c.Listeners = []config.Listener{{Name: "PLAINTEXT", Host: "", Port: 0}}
		c.ListenBacklog = 50
	})
	port := e.srv.Addrs()[0].(*net.TCPAddr).Port
	hosts := []string{"127.0.0.1"}
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		ln.Close()
		hosts = append(hosts, "::1")
	}
	for _, h := range hosts {
		r := dialRaw(t, net.JoinHostPort(h, strconv.Itoa(port)))
		if resp := r.roundTrip(metadataReq(1)).(*kmsg.MetadataResponse); len(resp.Brokers) != 1 {
			t.Fatalf("%s: metadata %+v", h, resp)
		}
	}
	s := New(Config{Listeners: []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: port}}, ListenBacklog: 50}, &fakeDispatcher{}, nil)
	defer s.Close()
	if err := s.Listen(); err == nil {
		t.Fatal("bound a taken port")
	}
}

// connection.failed.authentication.delay.ms holds a failed SASL
// authentication's answer and the close back (KIP-306); 0 answers at once.
func TestFailedAuthenticationDelay(t *testing.T) {
	const delay = 400 * time.Millisecond
	for _, d := range []time.Duration{delay, 0} {
		env, _ := startSASLConfig(t, nil, func(c *Config) { c.FailedAuthenticationDelay = d })
		r := dialRaw(t, env.addr)
		handshake(r, 1, "PLAIN")
		start := time.Now()
		a := authenticate(r, 1, "\x00alice\x00nope")
		took := time.Since(start)
		if a.ErrorCode != kerr.SaslAuthenticationFailed.Code {
			t.Fatalf("delay %v: %+v", d, a)
		}
		r.expectClosed()
		if d > 0 && took < d {
			t.Fatalf("failure answered after %v; connection.failed.authentication.delay.ms=%v", took, d)
		}
		if d == 0 && took >= delay {
			t.Fatalf("delay 0: answered after %v", took)
		}
		// An unsupported mechanism is a failed authentication too.
		r = dialRaw(t, env.addr)
		start = time.Now()
		if hs := handshake(r, 1, "GSSAPI"); hs.ErrorCode != kerr.UnsupportedSaslMechanism.Code {
			t.Fatalf("handshake %+v", hs)
		}
		if took := time.Since(start); d > 0 && took < d {
			t.Fatalf("unsupported mechanism answered after %v", took)
		}
		r.expectClosed()
		// A request out of place gets no answer; the close waits too.
		r = dialRaw(t, env.addr)
		start = time.Now()
		r.send(metadataReq(1))
		r.expectClosed()
		if took := time.Since(start); d > 0 && took < d {
			t.Fatalf("unexpected request: closed after %v", took)
		}
	}
}

// queued.max.request.bytes: while the requests read and unanswered use up
// the pool, no connection reads another; answering frees it.
func TestQueuedMaxRequestBytes(t *testing.T) {
	e := startServer(t, func(c *Config) { c.QueuedMaxRequestBytes = 1 })
	e.d.setLaterBatch(1000) // Heartbeats wait until flushLaters
	a, b := dialRaw(t, e.addr), dialRaw(t, e.addr)
	hb := func(member string) *kmsg.HeartbeatRequest {
		r := kmsg.NewPtrHeartbeatRequest()
		r.Version, r.MemberID = 4, member
		return r
	}
	ha, hb2 := hb("m-1"), hb("m-2")
	a.send(ha)
	waitFor(t, "a's heartbeat dispatched", func() bool { return e.d.outstanding() == 1 })
	b.send(hb2)
	waitFor(t, "b's reader waiting for memory", func() bool { return e.srv.Stats.MemoryPoolWaits.Load() >= 1 })
	if n := e.d.outstanding(); n != 1 {
		t.Fatalf("%d heartbeats dispatched while the pool was used up", n)
	}
	e.d.flushLaters()
	if _, resp, err := a.recv(ha); err != nil || resp.(*kmsg.HeartbeatResponse).ThrottleMillis != 1 {
		t.Fatalf("a: %v", err)
	}
	waitFor(t, "b's heartbeat dispatched", func() bool { return e.d.outstanding() == 1 })
	e.d.flushLaters()
	if _, resp, err := b.recv(hb2); err != nil || resp.(*kmsg.HeartbeatResponse).ThrottleMillis != 2 {
		t.Fatalf("b: %v", err)
	}
	waitFor(t, "pool refilled", func() bool { return e.srv.pool.available() == 1 })
}
