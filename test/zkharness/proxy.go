package zkharness

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a TCP proxy on a free loopback port in front of a ZooKeeper
// server. Pause cuts every proxied connection and refuses new ones until
// Resume: to the client the ensemble is unreachable, and the server, which
// hears nothing from the session, expires it once the session timeout has
// passed. That is how a test forces a session expiry without touching the
// server.
type Proxy struct {
	target string
	ln     net.Listener

	mu     sync.Mutex
	paused bool
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup // accept loop and every pipe goroutine
}

// NewProxy starts a proxy to target ("host:port") and closes it when the
// test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := StartProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// StartProxy starts a proxy to target; the caller must Close it.
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("zkharness: proxy listen: %w", err)
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's "127.0.0.1:<port>", to use as zookeeper.connect.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Pause cuts every open connection and refuses (accepts and closes) new
// ones until Resume.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = true
	p.closeConnsLocked()
}

// Resume lets new connections through again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
}

// Paused reports whether traffic is cut.
func (p *Proxy) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// Close stops the proxy, closes every connection and waits for its
// goroutines to end. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.closeConnsLocked()
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) closeConnsLocked() {
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// track registers c unless the proxy is paused or closed.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused || p.closed {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if !p.track() { // paused: refuse
			client.Close()
			continue
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		if !p.track(client, server) {
			client.Close()
			server.Close()
			continue
		}
		p.wg.Add(2)
		go p.pipe(client, server)
		go p.pipe(server, client)
	}
}

// pipe copies src to dst; when either side ends, both are closed so the
// opposite pipe ends too.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.untrack(dst, src)
}
