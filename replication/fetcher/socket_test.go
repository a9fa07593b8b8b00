package fetcher

import (
	"context"
	"crypto/tls"
	"net"
	"syscall"
	"testing"
	"time"

	"gregor/config"
	"gregor/wire/security"
	"gregor/wire/security/clientsec"
)

// rcvbuf reads a connection's SO_RCVBUF.
func rcvbuf(t *testing.T, c net.Conn) int {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var serr error
	if err := raw.Control(func(fd uintptr) { n, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return n
}

// replica.socket.receive.buffer.bytes is the fetch connection's SO_RCVBUF
// (Linux reports twice the value set, its bookkeeping share); -1 leaves
// the OS default, which is not that.
func TestFetchConnReceiveBuffer(t *testing.T) {
	for _, tc := range []struct {
		set  int
		want func(int) bool
	}{
		{8192, func(n int) bool { return n == 2*8192 }},
		{-1, func(n int) bool { return n != 2*8192 }},
	} {
		fl := startFakeLeader(t, 0)
		fc := newFetchConn(fl.ln.Addr().String(), "test", clientsec.Client{}, 5*time.Second, tc.set)
		fl.answers <- []byte{}
		if _, err := fc.fetch(context.Background(), fetchReq()); err != nil {
			t.Fatal(err)
		}
		if n := rcvbuf(t, fc.conn); !tc.want(n) {
			t.Errorf("replica.socket.receive.buffer.bytes=%d: SO_RCVBUF %d", tc.set, n)
		}
		fc.close()
	}
}

// replica.socket.timeout.ms bounds the connection's setup: a leader that
// accepts the TCP connection but never answers the TLS handshake fails the
// fetch after the setup bound, long before the 10 s handshake bound of
// clientsec (the caller's 5 s context is still live when it returns).
func TestFetchConnSetupTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // held open, never answered
		}
		close(accepted)
	}()
	sec := clientsec.Client{Protocol: security.SSL, TLS: &tls.Config{InsecureSkipVerify: true}}
	fc := newFetchConn(ln.Addr().String(), "test", sec, 300*time.Millisecond, -1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := fc.fetch(ctx, fetchReq()); err == nil {
		t.Fatal("fetch through a silent TLS leader succeeded")
	}
	if ctx.Err() != nil {
		t.Fatalf("the fetch ended only with the caller's context: replica.socket.timeout.ms did not bound the setup")
	}
	ln.Close()
	for c := range accepted {
		c.Close()
	}
}

// The replica.fetch.* keys, read by config.Parse, are what the follower's
// Fetch requests carry, and a replica.fetch.max.bytes smaller than a
// batch still replicates it (the leader sends the first batch whole,
// KIP-74).
func TestFollowerFetchCarriesBrokerKeys(t *testing.T) {
	b, err := config.Parse(map[string]string{"replica.fetch.max.bytes": "100", "replica.fetch.min.bytes": "3",
		"replica.fetch.wait.max.ms": "321", "replica.fetch.response.max.bytes": "5000", "replica.fetch.backoff.ms": "40",
		"replica.lag.time.max.ms": "400"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc := ConfigFromBroker(b)
	c := newClusterWith(t, &fc, 1, 2)
	c.apply(tp0, 1, 0, []int32{1, 2}, []int32{1, 2}, 1)
	big := string(make([]byte, 1000))
	off, perr := produce(t, c.brokers[1], tp0, 1, 10*time.Second, big, big)
	if perr != nil {
		t.Fatal(perr)
	}
	eventually(t, 10*time.Second, "the follower to replicate a batch larger than replica.fetch.max.bytes", func() bool {
		return view(c.brokers[2], tp0).LogEndOffset >= off+2
	})
	select {
	case f := <-c.brokers[1].gate.fetches:
		if f.ReplicaID != 2 || f.MaxWaitMillis != 321 || f.MinBytes != 3 || f.MaxBytes != 5000 {
			t.Fatalf("follower Fetch: replica %d wait %d min %d max %d, want 2/321/3/5000", f.ReplicaID, f.MaxWaitMillis, f.MinBytes, f.MaxBytes)
		}
		if len(f.Topics) != 1 || len(f.Topics[0].Partitions) != 1 || f.Topics[0].Partitions[0].PartitionMaxBytes != 100 {
			t.Fatalf("follower Fetch partitions %+v, want one with PartitionMaxBytes 100", f.Topics)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no follower Fetch reached the leader")
	}
}
