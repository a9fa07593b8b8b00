// Package server is Gregor's Kafka protocol server: it accepts TCP
// connections on every listener, frames requests (4-byte size prefix,
// bounded by socket.request.max.bytes), parses request headers, decodes
// bodies with kmsg and hands them to a wire.Dispatcher in request order, and
// writes responses in request order (Kafka clients pipeline requests and
// match responses by order as well as correlation id).
//
// Each connection has exactly two goroutines, both owned by the Server:
// a reader (frames, decodes, dispatches, queues replies) and a writer
// (resolves replies in order, encodes, writes; file regions go out with
// sendfile). The queue between them is bounded (MaxInFlightPerConn): when it
// is full the reader stops reading, which is Kafka's per-connection
// back-pressure. Anything wrong with one connection — a bad frame, a panic
// in a handler — closes that connection only.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"gregor/config"
	"gregor/wire"
)

// Defaults used when the matching Config field is zero.
const (
	// DefaultSocketRequestMaxBytes is Kafka's socket.request.max.bytes default (100 MiB).
	DefaultSocketRequestMaxBytes = 104857600
	// DefaultMaxInFlightPerConn bounds the requests read but not yet answered
	// on one connection.
	DefaultMaxInFlightPerConn = 64
)

// Config configures a Server.
type Config struct {
	// Listeners to bind (listeners); Host "" binds all interfaces, Port 0 a
	// free port (see Server.Addrs).
	Listeners []config.Listener
	// SocketRequestMaxBytes (socket.request.max.bytes): a frame size above
	// it, or negative, closes the connection. 0 = 104857600.
	SocketRequestMaxBytes int32
	// SocketSendBufferBytes (socket.send.buffer.bytes) and
	// SocketReceiveBufferBytes (socket.receive.buffer.bytes) set SO_SNDBUF /
	// SO_RCVBUF; -1 or 0 keeps the OS default.
	SocketSendBufferBytes    int
	SocketReceiveBufferBytes int
	// MaxInFlightPerConn is the capacity of a connection's queue of
	// unanswered requests; the reader blocks when it is full. Counting the
	// response the writer is sending and the request the reader is trying
	// to queue, at most MaxInFlightPerConn+2 requests of one connection are
	// dispatched and unanswered. 0 = 64.
	MaxInFlightPerConn int
	// ConnectionsMaxIdle (connections.max.idle.ms, Kafka default 10 min):
	// a connection with nothing read for this long and no request
	// outstanding is closed. 0 or negative = never.
	ConnectionsMaxIdle time.Duration
	// FailedAuthenticationDelay (connection.failed.authentication.delay.ms,
	// Kafka default 100 ms, KIP-306): after a failed SASL authentication
	// the error response and the close wait this long. 0 = at once.
	FailedAuthenticationDelay time.Duration
	// ListenBacklog (socket.listen.backlog.size, Kafka default 50) is
	// listen(2)'s backlog on every listener (listen_linux.go); 0 = Go's
	// (net.core.somaxconn).
	ListenBacklog int
	// QueuedMaxRequestBytes (queued.max.request.bytes): the bytes of
	// requests read from all connections and not yet answered; while they
	// are used up, readers wait before reading the next request body
	// (mempool.go). <= 0 = unbounded.
	QueuedMaxRequestBytes int64
	// Security is each listener's security by listener name (security.go);
	// a listener without an entry is PLAINTEXT. SecurityFromBroker builds it.
	Security map[string]ListenerSecurity
	// HandshakeTimeout bounds a TLS handshake (tls.go). 0 = 10 s.
	HandshakeTimeout time.Duration
	// Limits are the connection quotas applied at accept (limits.go;
	// max.connections and friends); nil = none.
	Limits *config.ConnectionLimits
	// InterBrokerListener is exempt from Limits.Max (Kafka lets the
	// brokers' own connections in when the broker is full).
	InterBrokerListener string
}

// ConfigFromBroker takes the listener and socket settings of a broker config.
// MaxInFlightPerConn comes from num.io.threads (see config.Broker).
func ConfigFromBroker(b *config.Broker) Config {
	return Config{
		Listeners:                 b.Listeners,
		SocketRequestMaxBytes:     b.SocketRequestMaxBytes,
		SocketSendBufferBytes:     b.SocketSendBufferBytes,
		SocketReceiveBufferBytes:  b.SocketReceiveBufferBytes,
		MaxInFlightPerConn:        b.NumIOThreads,
		ConnectionsMaxIdle:        max(b.SocketServer.ConnectionsMaxIdle, 0), // negative = never
		FailedAuthenticationDelay: b.SocketServer.FailedAuthenticationDelay,
		ListenBacklog:             b.SocketServer.ListenBacklog,
		QueuedMaxRequestBytes:     b.SocketServer.QueuedMaxRequestBytes,
		Limits:                    &b.ConnectionLimits,
		InterBrokerListener:       b.Security.InterBrokerListener,
	}
}

// Stats are the server's counters, updated atomically; read them with Load.
type Stats struct {
	ConnectionsOpen     atomic.Int64 // connections currently open
	ConnectionsAccepted atomic.Int64 // connections accepted since Start
	ConnectionsClosed   atomic.Int64 // connections closed since Start
	Requests            atomic.Int64 // requests read (whole frames)
	BytesIn             atomic.Int64 // bytes read, size prefixes included
	BytesOut            atomic.Int64 // bytes written, size prefixes included
	// TLSHandshakeFailures counts TLS listener connections closed because
	// their handshake failed (a plaintext client, an untrusted or missing
	// client certificate, a stalled client).
	TLSHandshakeFailures atomic.Int64
	// ConnectionsRefused counts connections closed at accept by a
	// connection quota (Config.Limits).
	ConnectionsRefused atomic.Int64
	// MemoryPoolWaits counts the times a reader waited for request memory
	// (Config.QueuedMaxRequestBytes used up), Kafka's MemoryPool depletion.
	MemoryPoolWaits atomic.Int64
}

// Server is a Kafka protocol server. Create it with New, then Start; Close
// stops it. Its methods are safe for concurrent use.
type Server struct {
	cfg       Config
	d         wire.Dispatcher
	log       *zap.Logger
	supported []wire.ApiRange // indexed by API key; MaxVersion -1 = not served
	ranges    []wire.ApiRange // as Dispatcher.Supported returned them

	// Stats are the live counters (connections, requests, bytes in/out).
	Stats Stats
	// Observer, if set before Start, sees every answered request with its
	// timings (observe.go); nil costs nothing.
	Observer RequestObserver
	// Auth, if set before Start, hears of every SASL authentication (sasl.go).
	Auth AuthObserver

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the server starts

	mu        sync.Mutex
	started   bool
	closed    bool
	listeners []net.Listener
	names     []string // listener names, parallel to listeners
	conns     map[*conn]struct{}
	// tlsOverrides: listener name → *tls.Config installed by SetListenerTLS.
	tlsOverrides sync.Map
	limits       *connLimits // never nil: unlimited without Config.Limits (SetConnectionLimits replaces them)
	pool         *memPool    // queued.max.request.bytes; nil = unbounded
}

// New returns a Server that dispatches to d. It binds nothing until Start.
// The supported API ranges are read from d once, here.
func New(cfg Config, d wire.Dispatcher, log *zap.Logger) *Server {
	if cfg.SocketRequestMaxBytes <= 0 {
		cfg.SocketRequestMaxBytes = DefaultSocketRequestMaxBytes
	}
	if cfg.MaxInFlightPerConn <= 0 {
		cfg.MaxInFlightPerConn = DefaultMaxInFlightPerConn
	}
	if log == nil {
		log = zap.NewNop()
	}
	s := &Server{cfg: cfg, d: d, log: log, conns: map[*conn]struct{}{}}
	lim := config.ConnectionLimits{Max: config.Unlimited, PerIP: config.Unlimited, CreationRate: config.Unlimited}
	if cfg.Limits != nil {
		lim = *cfg.Limits
	}
	s.limits = newConnLimits(lim, cfg.InterBrokerListener)
	s.pool = newMemPool(cfg.QueuedMaxRequestBytes)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.ranges = d.Supported()
	for _, r := range s.ranges {
		for int(r.Key) >= len(s.supported) {
			s.supported = append(s.supported, wire.ApiRange{Key: int16(len(s.supported)), MinVersion: 0, MaxVersion: -1})
		}
		if r.Key >= 0 {
			s.supported[r.Key] = r
		}
	}
	return s
}

// supports reports whether (key, version) is inside Dispatcher.Supported().
func (s *Server) supports(key, version int16) bool {
	if key < 0 || int(key) >= len(s.supported) {
		return false
	}
	r := s.supported[key]
	return version >= r.MinVersion && version <= r.MaxVersion
}

// Start binds every listener and starts accepting. On a bind error it
// closes what it bound and returns the error. Start may be called once.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return errors.New("server: Start called twice or after Close")
	}
	s.started = true
	if err := s.bindLocked(); err != nil {
		return err
	}
	for i, ln := range s.listeners {
		s.log.Info("listening", zap.String("listener", s.names[i]), zap.Stringer("addr", ln.Addr()))
		s.wg.Add(1)
		go s.acceptLoop(ln, s.names[i])
	}
	return nil
}

// Listen binds every listener without accepting yet: a client's connect
// completes in the kernel's backlog and its requests wait there until
// Start serves them, as Kafka's SocketServer.startup(startProcessingRequests
// = false) binds its acceptors before the broker registers and
// startProcessingRequests serves once start-up is done. Start binds
// whatever Listen has not. Calling it again is a no-op; on an error no
// listener stays bound. Close closes bound listeners whether or not
// Start ran.
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return errors.New("server: Listen after Start or Close")
	}
	return s.bindLocked()
}

// bindLocked binds the listeners unless they are bound (s.mu held).
func (s *Server) bindLocked() error {
	if len(s.listeners) > 0 {
		return nil
	}
	for _, l := range s.cfg.Listeners {
		addr := net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
		ln, err := listenTCP(addr, s.cfg.ListenBacklog) // listen_linux.go
		if err != nil {
			for _, bound := range s.listeners {
				bound.Close()
			}
			s.listeners, s.names = nil, nil
			return fmt.Errorf("server: listener %s on %s: %w", l.Name, addr, err)
		}
		s.listeners = append(s.listeners, ln)
		s.names = append(s.names, l.Name)
	}
	return nil
}

// Addrs returns the bound address of every listener, in Config order (so a
// test that asked for port 0 learns the port).
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]net.Addr, len(s.listeners))
	for i, ln := range s.listeners {
		out[i] = ln.Addr()
	}
	return out
}

// Close stops accepting, closes every connection (abandoned responses are
// released), and waits for every goroutine the server started. Idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	s.cancel()
	var first error
	for _, ln := range s.listeners {
		if err := ln.Close(); err != nil && first == nil {
			first = err
		}
	}
	for c := range s.conns {
		c.abort()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return first
}

func (s *Server) acceptLoop(ln net.Listener, name string) {
	defer s.wg.Done()
	backoff := 5 * time.Millisecond
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors and the like: wait and retry, as Kafka's
			// acceptor does, rather than spin or give up the listener.
			s.log.Warn("accept failed; retrying", zap.String("listener", name), zap.Duration("backoff", backoff), zap.Error(err))
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
				return
			}
			backoff = min(backoff*2, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		ip := hostOf(nc)
		if limit := s.limits.admit(ip, name); limit != "" {
			s.refuse(nc, name, ip, limit)
			continue
		}
		s.serve(nc, name, ip)
	}
}

// serve registers a new connection and starts its reader and writer.
func (s *Server) serve(nc net.Conn, listener, ip string) {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		if s.cfg.SocketSendBufferBytes > 0 {
			tc.SetWriteBuffer(s.cfg.SocketSendBufferBytes)
		}
		if s.cfg.SocketReceiveBufferBytes > 0 {
			tc.SetReadBuffer(s.cfg.SocketReceiveBufferBytes)
		}
	}
	c := newConn(s, nc, listener)
	c.ip = ip
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		s.limits.release(ip, listener)
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(2)
	s.mu.Unlock()
	s.Stats.ConnectionsAccepted.Add(1)
	s.Stats.ConnectionsOpen.Add(1)
	go c.readLoop()
	go c.writeLoop()
}

// forget removes a finished connection.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.limits.release(c.ip, c.listener)
	s.Stats.ConnectionsOpen.Add(-1)
	s.Stats.ConnectionsClosed.Add(1)
}
