package server

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
)

// Encoding failures in the writer (a panic in AppendTo, a response of the
// wrong type) close that connection only, logged.
func TestWriterFailuresCloseOnlyThatConnection(t *testing.T) {
	e := startServer(t, nil)
	good := dialRaw(t, e.addr)
	for _, topic := range []string{"panic-encode", "wrong-key"} {
		bad := dialRaw(t, e.addr)
		bad.send(metadataReq(1, topic))
		bad.expectClosed()
		good.roundTrip(metadataReq(1))
	}
	if !e.logged("panic while encoding response") || !e.logged("write failed") {
		t.Error("writer failures not logged")
	}
}

// A region past the end of its file (segment truncated underneath) cannot
// be sent once the size prefix is out: the connection closes and the body
// is still released (startServer's cleanup waits for every release).
func TestShortRegionClosesConnection(t *testing.T) {
	e := startServer(t, nil)
	c := dialRaw(t, e.addr)
	c.roundTrip(fetchReq(11, [][2]int64{{0, 10}}))
	c.send(fetchReq(11, [][2]int64{{int64(len(e.data)) - 100, 1000}}))
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c.c) // the truncated response, then EOF
	if err != nil {
		t.Fatalf("connection not closed: %v", err)
	}
	if len(got) < 4 || int(binary.BigEndian.Uint32(got))+4 <= len(got) {
		t.Fatalf("got %d bytes; want a truncated frame", len(got))
	}
	if !e.logged("write failed") {
		t.Error("short region not logged")
	}
}

// Response.CloseConn: the response is sent, then the connection closes.
func TestCloseConnAfterResponse(t *testing.T) {
	e := startServer(t, nil)
	c := dialRaw(t, e.addr)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKey = 1, "close"
	if r := c.roundTrip(fc).(*kmsg.FindCoordinatorResponse); r.NodeID != 1 {
		t.Fatalf("NodeID %d", r.NodeID)
	}
	c.expectClosed()
}

// A client that half-closes after pipelining still gets every response
// already read, then the server closes.
func TestHalfCloseDrainsQueuedResponses(t *testing.T) {
	e := startServer(t, nil)
	c := dialRaw(t, e.addr)
	var reqs []kmsg.Request
	for i := 0; i < 5; i++ {
		req := metadataReq(int16(i), "x")
		reqs = append(reqs, req)
		c.send(req)
	}
	c.c.(*net.TCPConn).CloseWrite()
	for i, req := range reqs {
		corr, _, err := c.recv(req)
		if err != nil || corr != int32(i+1) {
			t.Fatalf("response %d: corr %d, %v", i, corr, err)
		}
	}
	c.expectClosed()
}

// Start fails cleanly when a listener cannot bind, releasing the others.
func TestStartBindError(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	s := New(Config{Listeners: []config.Listener{
		{Name: "A", Host: "127.0.0.1", Port: 0},
		{Name: "B", Host: "127.0.0.1", Port: port},
	}}, &fakeDispatcher{}, nil)
	if err := s.Start(); err == nil {
		t.Fatal("Start succeeded on a taken port")
	}
	if len(s.Addrs()) != 0 {
		t.Fatal("listeners left bound after a failed Start")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// Two listeners: both serve, and the request context names the listener.
func TestTwoListeners(t *testing.T) {
	e := startServer(t, func(c *Config) {
		c.Listeners = append(c.Listeners, config.Listener{Name: "INTERNAL", Host: "127.0.0.1", Port: 0})
	})
	addrs := e.srv.Addrs()
	if len(addrs) != 2 {
		t.Fatalf("%d addrs", len(addrs))
	}
	for _, a := range addrs {
		dialRaw(t, a.String()).roundTrip(metadataReq(1))
	}
}

// connections.max.idle.ms: a silent connection is closed; one waiting on an
// outstanding response is not.
func TestIdleConnectionsClosed(t *testing.T) {
	const idle = 50 * time.Millisecond
	e := startServer(t, func(c *Config) { c.ConnectionsMaxIdle = idle })
	e.d.setLaterBatch(2)
	silent := dialRaw(t, e.addr)
	busy := dialRaw(t, e.addr)
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.MemberID = 4, "m-0"
	busy.send(hb)
	silent.expectClosed()
	if !e.logged("idle for connections.max.idle.ms=50") {
		t.Error("idle close not logged")
	}
	// Not an event we can await: the busy connection must survive several
	// idle periods while its heartbeat is unanswered.
	time.Sleep(4 * idle)
	hb2 := kmsg.NewPtrHeartbeatRequest()
	hb2.Version, hb2.MemberID = 4, "m-1"
	busy.send(hb2) // completes the batch of 2: both answered
	for i, req := range []kmsg.Request{hb, hb2} {
		if _, resp, err := busy.recv(req); err != nil || resp.(*kmsg.HeartbeatResponse).ThrottleMillis != int32(i) {
			t.Fatalf("busy connection response %d: %v", i, err)
		}
	}
}

// Listen binds without serving: a connection made then is accepted by the
// kernel and its request answered once Start serves; Listen after Start is
// refused, and Close closes listeners that never served.
func TestListenThenStart(t *testing.T) {
	s := New(Config{Listeners: []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0}}}, &fakeDispatcher{}, nil)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil { // a no-op
		t.Fatalf("second Listen: %v", err)
	}
	addr := s.Addrs()[0].String()
	c := dialRaw(t, addr) // bound: not refused
	corr := c.send(metadataReq(1))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if got, _, err := c.recv(metadataReq(1)); err != nil || got != corr {
		t.Fatalf("response to the request sent before Start: correlation %d (%v), want %d", got, err, corr)
	}
	if err := s.Listen(); err == nil {
		t.Fatal("Listen after Start succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	idle := New(Config{Listeners: []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0}}}, &fakeDispatcher{}, nil)
	if err := idle.Listen(); err != nil {
		t.Fatal(err)
	}
	port := idle.Addrs()[0].String()
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", port) // released by Close without Start
	if err != nil {
		t.Fatalf("port still bound after Close of a server that never served: %v", err)
	}
	ln.Close()
}
