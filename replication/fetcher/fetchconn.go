package fetcher

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire/security/clientsec"
)

// fetchVersion is the Fetch version a follower sends: the newest this
// broker serves (v12, flexible, with LastFetchedEpoch/DivergingEpoch of
// KIP-595; v13+ name topics by id). Every broker of a cluster runs this
// code, so there is no version to negotiate.
const fetchVersion = 12

// fetchReadMax bounds a Fetch response's size (kgo's default
// BrokerMaxReadBytes): a corrupt length prefix must not make us allocate
// gigabytes.
const fetchReadMax = 100 << 20

// fetchTimeoutOverhead is added to the request's MaxWaitMillis for the
// deadline of one Fetch round trip (kgo's RequestTimeoutOverhead default).
const fetchTimeoutOverhead = 10 * time.Second

// fetchConn is a fetcher's own connection to its leader, for Fetch
// requests only (OffsetForLeaderEpoch and ListOffsets go through kgo). It
// reads every response into one buffer that it reuses for the next: kgo
// allocates (and the runtime zeroes) a fresh buffer per response, a MiB
// per partition per round, which with the GC work it causes was 8–15% of
// a follower broker's CPU in the 3-broker acks=all perf run.
//
// The parsed response's record batches alias that buffer, so it may be
// overwritten only when nothing reads them any more. That holds because
// the fetcher sends its next Fetch only after every partition actor has
// answered its append (kick waits for opsPending); a fetcher that stops
// waiting for an answer (a partition removed or re-added, an operation
// timed out) calls detach, and the next response gets a new buffer.
//
// Only the request goroutine uses a fetchConn while a request is in
// flight; the fetcher actor creates, detaches and closes it between
// requests (there is at most one in flight, see kick).
type fetchConn struct {
	addr     string
	clientID string
	security clientsec.Client // the inter-broker listener's (Config.Security)
	// setup bounds the connection's setup, TCP connect to the end of the
	// SASL handshake (replica.socket.timeout.ms); rcvbuf is its SO_RCVBUF
	// (replica.socket.receive.buffer.bytes, -1 = the OS default).
	setup  time.Duration
	rcvbuf int
	format *kmsg.RequestFormatter
	conn   net.Conn
	br     *bufio.Reader
	wbuf   []byte
	buf    []byte
	corr   int32
}

// newFetchConn makes a fetch connection to addr; setup and rcvbuf are
// Config.SocketTimeout and Config.SocketReceiveBufferBytes.
func newFetchConn(addr, clientID string, sec clientsec.Client, setup time.Duration, rcvbuf int) *fetchConn {
	return &fetchConn{addr: addr, clientID: clientID, security: sec, setup: setup, rcvbuf: rcvbuf,
		format: kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))}
}

// dial connects with the receive buffer set before the connect (so TCP
// window scaling can use it, as Kafka sets it before connecting), the
// whole setup bounded by fc.setup.
func (fc *fetchConn) dial(ctx context.Context) (net.Conn, error) {
	d := &net.Dialer{Timeout: fc.setup}
	if fc.rcvbuf > 0 {
		n := fc.rcvbuf
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n) }); err != nil {
				return err
			}
			return serr
		}
	}
	if fc.setup > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, fc.setup)
		defer cancel()
	}
	return fc.security.DialWith(ctx, d, fc.addr, fc.clientID)
}

// detach gives the current response buffer up to whoever may still read
// it: the next response is read into a new one.
func (fc *fetchConn) detach() { fc.buf = nil }

// close closes the connection (the next fetch dials again).
func (fc *fetchConn) close() {
	if fc.conn != nil {
		fc.conn.Close()
		fc.conn, fc.br = nil, nil
	}
}

// fetch sends req as Fetch v12 and returns the response, whose record
// batches alias fc's buffer (see fetchConn). ctx's cancellation ends the
// round trip at once. Any error closes the connection: the next call
// dials again.
func (fc *fetchConn) fetch(ctx context.Context, req *kmsg.FetchRequest) (*kmsg.FetchResponse, error) {
	resp, err := fc.roundTrip(ctx, req)
	if err != nil {
		fc.close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, err
	}
	return resp, nil
}

func (fc *fetchConn) roundTrip(ctx context.Context, req *kmsg.FetchRequest) (*kmsg.FetchResponse, error) {
	if fc.conn == nil {
		// TLS and SASL, when the inter-broker listener has them, are done
		// before the first fetch (bounded by clientsec's handshake timeout).
		c, err := fc.dial(ctx)
		if err != nil {
			return nil, err
		}
		fc.conn, fc.br = c, bufio.NewReaderSize(c, 64<<10)
	}
	c := fc.conn
	if err := c.SetDeadline(time.Now().Add(time.Duration(req.MaxWaitMillis)*time.Millisecond + fetchTimeoutOverhead)); err != nil {
		return nil, err
	}
	// Cancelling moves the deadline to the past, which ends a blocked
	// read or write.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	req.Version = fetchVersion
	fc.corr++
	fc.wbuf = fc.format.AppendRequest(fc.wbuf[:0], req, fc.corr)
	if _, err := c.Write(fc.wbuf); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(fc.br, size[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > fetchReadMax {
		return nil, fmt.Errorf("fetch response of %d bytes", n)
	}
	if cap(fc.buf) < n {
		fc.buf = make([]byte, n)
	}
	body := fc.buf[:n]
	if _, err := io.ReadFull(fc.br, body); err != nil {
		return nil, err
	}
	if corr := int32(binary.BigEndian.Uint32(body)); corr != fc.corr {
		return nil, fmt.Errorf("fetch response for correlation id %d, want %d", corr, fc.corr)
	}
	body, err := skipTags(body[4:]) // flexible response header: tagged fields
	if err != nil {
		return nil, err
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = fetchVersion
	if err := resp.ReadFrom(body); err != nil {
		return nil, err
	}
	return resp, nil
}

var errShortTags = errors.New("fetch response header: truncated tagged fields")

// skipTags returns b after the tagged-field section at its start (a
// uvarint count, then per field a uvarint tag, a uvarint size and that
// many bytes).
func skipTags(b []byte) ([]byte, error) {
	num, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errShortTags
	}
	b = b[n:]
	for range num {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, errShortTags
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < size {
			return nil, errShortTags
		}
		b = b[n+int(size):]
	}
	return b, nil
}
