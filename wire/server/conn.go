package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/wire"
	"gregor/wire/security"
)

// pending is one request whose response the writer still has to send.
type pending struct {
	key           int16
	version       int16 // version the response is encoded at
	correlationID int32
	// flexibleHeader: response header v1 (correlation id + empty tagged
	// fields) instead of v0. ApiVersions always uses v0 (KIP-511).
	flexibleHeader bool
	reply          wire.Reply
	timing         *RequestTiming // only with a Server.Observer
	// raw: a SASL token after SaslHandshake v0, sent with its size prefix
	// only, no response header (sasl.go).
	raw bool
	// frame is the request's buffer, recycled by the writer once the
	// response was written (Produce only, see framepool.go); nil = leave it
	// to the GC.
	frame *[]byte
	// poolBytes are the request's bytes taken from the server's memory
	// pool (queued.max.request.bytes), given back once it is answered.
	poolBytes int64
	// delay holds the response back this long before it is written: the
	// answer to a failed SASL authentication (KIP-306).
	delay time.Duration
}

// conn is one client connection: a reader goroutine and a writer goroutine
// joined by a bounded queue.
type conn struct {
	s        *Server
	nc       net.Conn
	listener string
	ip       string // client address, for the connection quotas (limits.go)
	log      *zap.Logger
	// protocol is the listener's security protocol; principal who the
	// connection authenticated as (security.Anonymous until it does). Both
	// are read and written by the reader goroutine only.
	protocol  security.Protocol
	principal security.Principal
	sasl      *saslConn // SASL state on SASL listeners, else nil (sasl.go)

	ctx    context.Context // cancelled by abort; RequestContext.Ctx
	cancel context.CancelFunc
	queue  chan *pending // reader → writer, request order; closed by the reader
	// outstanding counts requests queued and not yet answered (idle check).
	outstanding atomic.Int32
	// mutedUntil (unix ns) is when a client quota throttle ends (KIP-219,
	// mute.go): set by the writer after a throttled response, honoured
	// by the reader before it handles the next request.
	mutedUntil atomic.Int64
	// held are the memory pool bytes of the frame being read, not yet
	// handed to a pending (reader goroutine only).
	held int64

	abortOnce sync.Once
}

func newConn(s *Server, nc net.Conn, listener string) *conn {
	c := &conn{
		s:         s,
		nc:        wrapTLS(nc, s.listenerSecurity(listener)), // tls.go
		listener:  listener,
		protocol:  s.listenerSecurity(listener).Protocol,
		principal: security.Anonymous,
		log:       s.log.With(zap.String("listener", listener), zap.Stringer("remote", nc.RemoteAddr())),
		queue:     make(chan *pending, s.cfg.MaxInFlightPerConn),
	}
	c.sasl = newSASLConn(s.listenerSecurity(listener))
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	return c
}

// abort closes the connection now: pending responses are abandoned (their
// bodies released) and both goroutines exit. Idempotent.
func (c *conn) abort() {
	c.abortOnce.Do(func() {
		c.cancel()
		closeRaw(c.nc) // tls.go
	})
}

// closeWithReason logs why a connection is being closed and closes it.
func (c *conn) closeWithReason(msg string, fields ...zap.Field) {
	c.log.Warn("closing connection: "+msg, fields...)
	c.abort()
}

// readLoop reads frames until EOF or an error. On a clean EOF at a frame
// boundary the writer still sends the responses already queued.
func (c *conn) readLoop() {
	defer c.s.wg.Done()
	defer close(c.queue)
	defer func() { c.s.pool.release(c.held); c.held = 0 }()
	if !c.handshake() { // TLS listeners (tls.go)
		c.abort()
		return
	}
	br := bufio.NewReaderSize(c.nc, 16<<10)
	var sizeBuf [4]byte
	idle := c.s.cfg.ConnectionsMaxIdle
	for {
		if !c.waitMute() {
			return
		}
		c.setReadDeadline(idle)
		if n, err := io.ReadFull(br, sizeBuf[:]); err != nil {
			switch {
			case c.ctx.Err() != nil:
			case errors.Is(err, os.ErrDeadlineExceeded) && c.saslStalled():
			case n == 0 && errors.Is(err, os.ErrDeadlineExceeded):
				if c.outstanding.Load() > 0 {
					continue // waiting on our answers is not idle
				}
				c.closeWithReason(fmt.Sprintf("idle for connections.max.idle.ms=%d", idle.Milliseconds()))
			case errors.Is(err, io.EOF):
				c.log.Debug("client closed the connection")
			default:
				c.closeWithReason("read failed", zap.Error(err))
			}
			return
		}
		size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
		if limit, key := c.maxFrame(); size < 0 || size > limit {
			if c.plaintextGotTLS(sizeBuf) { // tls.go
				return
			}
			c.closeWithReason(fmt.Sprintf("request size %d outside [0, %s=%d]", size, key, limit))
			return
		}
		if !c.takeMemory(int64(size)) {
			return
		}
		// Decoded requests (Produce's RecordBatches in particular) alias the
		// frame until their response is written; Produce frames are then
		// recycled (framepool.go), the others allocated at their exact size
		// and left to the GC. The API key (the frame's first two bytes)
		// decides which, before the frame is read.
		var frame []byte
		var handle *[]byte
		if key, err := peekKey(br, size); err == nil && key == 0 {
			frame, handle = getFrame(int(size))
		} else {
			frame = make([]byte, size)
		}
		if _, err := io.ReadFull(br, frame); err != nil {
			if c.ctx.Err() == nil {
				c.closeWithReason(fmt.Sprintf("truncated request frame (size %d)", size), zap.Error(err))
			}
			return
		}
		c.s.Stats.BytesIn.Add(4 + int64(size))
		c.s.Stats.Requests.Add(1)
		// A throttle that began while this frame was being read still
		// holds it back (the client's next request waits out the mute).
		if !c.waitMute() {
			putFrame(handle)
			return
		}
		if c.sasl != nil {
			if dispatch, keep := c.saslGate(frame); !dispatch {
				putFrame(handle)
				c.s.pool.release(c.held)
				c.held = 0
				if !keep {
					return
				}
				continue
			}
		}
		if !c.handleFrame(frame, handle, c.s.Observer != nil) {
			c.abort()
			return
		}
		// A request answered without a pending (none is) keeps nothing.
		c.s.pool.release(c.held)
		c.held = 0
	}
}

// takeMemory takes a frame's bytes from the server's memory pool
// (queued.max.request.bytes) before the frame is read, waiting while the
// pool is used up, as Kafka's Selector leaves a channel unread while its
// MemoryPool is out of memory. False: the connection closed meanwhile.
func (c *conn) takeMemory(n int64) bool {
	pool := c.s.pool
	if pool == nil {
		return true
	}
	if pool.available() <= 0 {
		c.s.Stats.MemoryPoolWaits.Add(1)
	}
	if !pool.acquire(c.ctx, n) {
		return false
	}
	c.held = n
	return true
}

// handleFrame parses and dispatches one request; false closes the connection
// (the reason has been logged). Panics while decoding or inside the
// dispatcher are recovered here: logged with their stack, and only this
// connection is closed. handle is frame's pool handle (getFrame, may be
// nil): a Produce's is handed to the writer to recycle after the response.
func (c *conn) handleFrame(frame []byte, handle *[]byte, observe bool) (ok bool) {
	var received time.Time
	if observe {
		received = time.Now()
	}
	var h requestHeader
	defer func() {
		if v := recover(); v != nil {
			c.log.Error("panic while handling request; closing connection",
				zap.Int16("api_key", h.key), zap.Int16("api_version", h.version),
				zap.Int32("correlation_id", h.correlationID),
				zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			ok = false
		}
	}()
	h, rest, err := parseFixedHeader(frame)
	if err != nil {
		c.closeWithReason("malformed request header", zap.Error(err))
		return false
	}
	req := kmsg.RequestForKey(h.key)
	if req == nil {
		c.closeWithReason("unknown API key", zap.Int16("api_key", h.key), zap.Int16("api_version", h.version))
		return false
	}
	if !c.s.supports(h.key, h.version) {
		return c.unsupportedVersion(h)
	}
	req.SetVersion(h.version)
	// ControlledShutdown v0 is the one request with header v0 (no client_id).
	var clientID string
	body := rest
	if !(h.key == 7 && h.version == 0) {
		clientID, body, err = parseClientID(rest, req.IsFlexible())
		if err != nil {
			c.closeWithReason("malformed request header", zap.Int16("api_key", h.key), zap.Int16("api_version", h.version), zap.Error(err))
			return false
		}
	}
	// kmsg's ReadFrom aliases bytes fields (Produce's RecordBatches) into
	// body and copies strings; UnsafeReadFrom would alias strings too, and a
	// topic name kept in a map would then pin a whole produce frame.
	if err := req.ReadFrom(body); err != nil {
		c.closeWithReason("cannot decode request body", zap.Int16("api_key", h.key), zap.Int16("api_version", h.version),
			zap.Int32("correlation_id", h.correlationID), zap.Error(err))
		return false
	}
	rc := &wire.RequestContext{
		Ctx:           c.ctx,
		Key:           h.key,
		Version:       h.version,
		CorrelationID: h.correlationID,
		ClientID:      clientID,
		Remote:        c.nc.RemoteAddr(),
		Listener:      c.listener,
		Principal:     c.principal,
		Protocol:      c.protocol,
		Raw:           body,
		Size:          len(frame),
		Mute:          c.mute,
	}
	var timing *RequestTiming
	if observe {
		timing = &RequestTiming{Key: h.key, Version: h.version, CorrelationID: h.correlationID, ClientID: clientID,
			Request: req, Received: received, Dispatched: time.Now()}
	}
	reply := c.s.d.Handle(rc, req)
	if timing != nil {
		timing.Handled = time.Now()
	}
	p := &pending{
		key:            h.key,
		version:        h.version,
		correlationID:  h.correlationID,
		flexibleHeader: req.IsFlexible() && h.key != 18,
		reply:          reply,
		timing:         timing,
	}
	if h.key == 0 { // Produce
		p.frame = handle
	}
	p.poolBytes, c.held = c.held, 0
	return c.enqueue(p)
}

// enqueue hands p to the writer, blocking while MaxInFlightPerConn
// responses are outstanding. It fails once the connection is aborting.
func (c *conn) enqueue(p *pending) bool {
	c.outstanding.Add(1)
	select {
	case c.queue <- p:
		return true
	case <-c.ctx.Done():
		c.abandon(p)
		return false
	}
}

// abandon releases what p's response holds without sending it. A Later
// reply that is not ready yet is waited for by a server-owned goroutine
// until it arrives or the server closes, so its segment references are not
// leaked.
func (c *conn) abandon(p *pending) {
	c.s.pool.release(p.poolBytes)
	p.poolBytes = 0
	if resp, ok := p.reply.TryResolve(); ok {
		release(resp)
		return
	}
	c.s.wg.Add(1) // the caller's goroutine holds a wg count, so this is no race with Wait
	go func() {
		defer c.s.wg.Done()
		if resp, ok := p.reply.Resolve(c.s.ctx); ok {
			release(resp)
		}
	}()
}

// release runs a response body's Release, if any, once.
func release(r wire.Response) {
	if r.Body != nil && r.Body.Release != nil {
		f := r.Body.Release
		r.Body.Release = nil
		f()
	}
}

// peekKey reads the API key of a frame of size bytes without consuming
// it; a frame too short to hold one is not peeked into (its bytes past the
// frame belong to the next request).
func peekKey(br *bufio.Reader, size int32) (int16, error) {
	if size < 2 {
		return -1, io.ErrUnexpectedEOF
	}
	b, err := br.Peek(2)
	if err != nil {
		return -1, err
	}
	return int16(binary.BigEndian.Uint16(b)), nil
}
