// Package connsetuptest holds test helpers for connection setup: a peer
// that accepts TCP and never answers (a hung broker).
package connsetuptest

import (
	"net"
	"sync"
	"testing"
)

// SilentListener listens on 127.0.0.1 (a free port), accepts every TCP
// connection and never reads from or answers it, so a TLS or SASL setup
// or a request sent there waits until its own timeout. It returns the
// "host:port" address; the listener and its connections are closed when
// the test ends (t.Cleanup).
func SilentListener(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}
