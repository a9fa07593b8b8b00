package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"go.uber.org/zap"

	"gregor/wire"
	"gregor/wire/sendfile"
)

// Writer buffering: ready responses are coalesced into one buffer and
// written when it reaches flushAt bytes, when the next reply is not ready
// yet, or when the queue is empty. Byte chunks of at least directAt bytes
// are written straight from the body instead of being copied.
const (
	flushAt  = 64 << 10
	directAt = 32 << 10
)

// writeLoop sends responses in request order until the reader closes the
// queue (then it closes the connection) or the connection is aborted (then
// it releases everything still queued).
func (c *conn) writeLoop() {
	defer c.s.wg.Done()
	defer c.s.forget(c)
	w := &respWriter{c: c, buf: make([]byte, 0, 16<<10)}
	err := w.run()
	if err != nil && c.ctx.Err() == nil {
		c.closeWithReason("write failed", zap.Error(err))
	}
	c.abort()
	for p := range c.queue { // until the reader has exited
		c.abandon(p)
	}
}

// respWriter holds the writer goroutine's buffer.
type respWriter struct {
	c   *conn
	buf []byte
}

// errCloseRequested ends the writer after a response that asked to close
// the connection (Response.CloseConn).
var errCloseRequested = errors.New("close requested by handler")

func (w *respWriter) run() error {
	c := w.c
	for {
		var p *pending
		var ok bool
		select {
		case p, ok = <-c.queue:
		default:
			// Nothing else ready: send what is buffered before waiting.
			if err := w.flush(); err != nil {
				return err
			}
			select {
			case p, ok = <-c.queue:
			case <-c.ctx.Done():
				return nil
			}
		}
		if !ok {
			return w.flush() // reader is done; everything queued was sent
		}
		resp, ready := p.reply.TryResolve()
		if !ready {
			if err := w.flush(); err != nil {
				c.abandon(p)
				return err
			}
			if resp, ready = p.reply.Resolve(c.ctx); !ready {
				c.abandon(p)
				return nil // aborted
			}
		}
		if p.timing != nil {
			p.timing.Resolved = time.Now()
		}
		if p.delay > 0 && !w.hold(p) {
			release(resp)
			c.s.pool.release(p.poolBytes)
			return nil // aborted
		}
		err := w.send(p, resp)
		if p.timing != nil && (err == nil || err == errCloseRequested) {
			p.timing.Sent, p.timing.Response = time.Now(), resp
			c.s.Observer.RequestDone(p.timing)
			p.timing.Response, p.timing.Request = wire.Response{}, nil
		}
		if resp.Throttle > 0 && (err == nil || err == errCloseRequested) {
			c.mute(resp.Throttle)
		}
		release(resp)
		// The reply resolved, so the handler is done with the request and
		// its response has been encoded (or sent): the frame is free.
		putFrame(p.frame)
		p.frame = nil
		c.s.pool.release(p.poolBytes)
		p.poolBytes = 0
		c.outstanding.Add(-1)
		if err == errCloseRequested {
			if ferr := w.flush(); ferr != nil {
				return ferr
			}
			c.log.Debug("closing connection after response, as the handler asked", zap.Int16("api_key", p.key))
			return nil
		}
		if err != nil {
			return err
		}
		if len(w.buf) >= flushAt {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
}

// hold flushes what is buffered and waits p.delay (a failed SASL
// authentication's answer, KIP-306); false when the connection is aborted
// meanwhile.
func (w *respWriter) hold(p *pending) bool {
	if err := w.flush(); err != nil {
		return false
	}
	t := time.NewTimer(p.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.c.ctx.Done():
		return false
	}
}

// send encodes one response (size, header, body) into the buffer, flushing
// before each file region, which goes out with sendfile. A panic while
// encoding a handler's message is recovered and closes the connection.
func (w *respWriter) send(p *pending, resp wire.Response) (err error) {
	defer func() {
		if v := recover(); v != nil {
			w.c.log.Error("panic while encoding response; closing connection",
				zap.Int16("api_key", p.key), zap.Int16("api_version", p.version),
				zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			err = fmt.Errorf("panic while encoding response: %v", v)
		}
	}()
	switch {
	case resp.None: // checked first: a handler may fill Msg and still send nothing (acks=0)
	case resp.Msg != nil:
		if resp.Msg.Key() != p.key {
			return fmt.Errorf("handler for API key %d answered a key %d response", p.key, resp.Msg.Key())
		}
		start := len(w.buf)
		w.header(p)
		resp.Msg.SetVersion(p.version)
		w.buf = resp.Msg.AppendTo(w.buf)
		size := len(w.buf) - start - 4
		if size > 1<<31-1 {
			return fmt.Errorf("response of %d bytes does not fit a frame", size)
		}
		binary.BigEndian.PutUint32(w.buf[start:], uint32(size))
	case resp.Body != nil:
		if err := w.body(p, resp.Body); err != nil {
			return err
		}
	default:
		return fmt.Errorf("handler for API key %d returned an empty Response", p.key)
	}
	if resp.CloseConn {
		return errCloseRequested
	}
	return nil
}

// header appends the size placeholder and the response header: v0 is the
// correlation id; v1 (flexible responses) adds an empty tagged-field section.
func (w *respWriter) header(p *pending) {
	w.buf = append(w.buf, 0, 0, 0, 0)
	if p.raw {
		return
	}
	w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(p.correlationID))
	if p.flexibleHeader {
		w.buf = append(w.buf, 0)
	}
}

// body writes a pre-encoded body: byte chunks through the buffer (large ones
// directly), file regions with sendfile at explicit offsets. The size prefix
// is computed from the chunks. Once the prefix is out, a short region (file
// truncated underneath) can only be handled by closing the connection.
func (w *respWriter) body(p *pending, b *wire.Body) error {
	var n int64
	for _, ch := range b.Chunks {
		if ch.Bytes != nil {
			n += int64(len(ch.Bytes))
		} else if ch.Stream != nil {
			n += ch.Stream.Len()
		} else if ch.Region.Len > 0 {
			n += ch.Region.Len
		}
	}
	hdr := int64(4)
	if p.raw {
		hdr = 0
	} else if p.flexibleHeader {
		hdr++
	}
	if n+hdr > 1<<31-1 {
		return fmt.Errorf("response body of %d bytes does not fit a frame", n)
	}
	start := len(w.buf)
	w.header(p)
	binary.BigEndian.PutUint32(w.buf[start:], uint32(n+hdr))
	for _, ch := range b.Chunks {
		switch {
		case ch.Bytes != nil && len(ch.Bytes) < directAt:
			w.buf = append(w.buf, ch.Bytes...)
		case ch.Bytes != nil:
			if err := w.flush(); err != nil {
				return err
			}
			if err := w.write(ch.Bytes); err != nil {
				return err
			}
		case ch.Stream != nil:
			if err := w.stream(ch.Stream); err != nil {
				return err
			}
		case ch.Region.Len > 0:
			if ch.Region.File == nil {
				return errors.New("response body region without a file")
			}
			if err := w.flush(); err != nil {
				return err
			}
			m, err := sendfile.Send(w.c.nc, ch.Region.File, ch.Region.Pos, int(ch.Region.Len))
			w.c.s.Stats.BytesOut.Add(int64(m))
			if err != nil {
				return fmt.Errorf("sending %d bytes of %s at %d: %w", ch.Region.Len, ch.Region.File.Name(), ch.Region.Pos, err)
			}
		}
	}
	return nil
}

// stream writes a Stream chunk through the buffer, flushing it as it
// fills, and checks the stream produced exactly its Len.
func (w *respWriter) stream(s wire.Stream) error {
	want, got := s.Len(), int64(0)
	err := s.Emit(func(p []byte) error {
		got += int64(len(p))
		if got > want {
			return fmt.Errorf("response stream produced more than its %d bytes", want)
		}
		w.buf = append(w.buf, p...)
		if len(w.buf) >= directAt {
			return w.flush()
		}
		return nil
	})
	if err == nil && got != want {
		err = fmt.Errorf("response stream produced %d of its %d bytes", got, want)
	}
	return err
}

func (w *respWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = make([]byte, 0, 16<<10) // don't pin one huge response's buffer
	} else {
		w.buf = w.buf[:0]
	}
	return err
}

func (w *respWriter) write(b []byte) error {
	m, err := w.c.nc.Write(b)
	w.c.s.Stats.BytesOut.Add(int64(m))
	if err == nil && m < len(b) {
		err = io.ErrShortWrite
	}
	return err
}
