// Package wire is Gregor's Kafka protocol layer. This file is the contract
// between the connection server (wire/server), the zero-copy fetch encoder
// (wire/fetchresp) and the request handlers (wire/handlers).
//
// Flow: a connection's reader goroutine reads a frame, parses the request
// header, decodes the body with kmsg and calls Dispatcher.Handle IN REQUEST
// ORDER on that goroutine (so per-connection ordering reaches the partition
// actors, which idempotent produce needs). Handle must not block for long: a
// handler that waits (acks=all, fetch long poll, an actor reply) returns
// Later(ch) and the connection's writer goroutine sends the responses in
// request order as they complete.
package wire

import (
	"context"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/wire/security"
)

// RequestContext describes one request as read off a connection.
type RequestContext struct {
	Ctx           context.Context // cancelled when the connection closes
	Key           int16           // API key
	Version       int16           // API version of the request
	CorrelationID int32
	ClientID      string // "" when null
	Remote        net.Addr
	Listener      string // listener name, e.g. "PLAINTEXT"
	// Principal is who the connection authenticated as (TLS client
	// certificate or SASL); security.Anonymous when it did not.
	Principal security.Principal
	// Protocol is the listener's security protocol.
	Protocol security.Protocol
	// Raw is the request body (after the header) as received; kmsg
	// UnsafeReadFrom decodes alias it, so it stays valid until the response
	// has been written.
	Raw []byte
	// Size is the request's size in bytes (header and body, without the
	// 4-byte size prefix): what producer_byte_rate counts (Kafka's
	// request.sizeInBytes).
	Size int
	// Mute, when set, holds the connection's next request back for d
	// from now (the server's KIP-219 mute, started early): a handler
	// that knows a throttle time at dispatch (Produce: the request's
	// bytes) calls it, so requests the client pipelined behind are not
	// read and counted before the throttle is known, as Kafka reads one
	// request of a connection at a time.
	Mute func(d time.Duration)
}

// Response is what a handler answers. Exactly one of Msg, Body or None.
type Response struct {
	// Msg is encoded by the writer at the request's version (the writer sets
	// its version; flexible response headers are handled by the writer).
	Msg kmsg.Response
	// Body is a pre-encoded response body (everything after the response
	// header), possibly with file regions for zero-copy fetch.
	Body *Body
	// None sends nothing (Produce with acks=0).
	None bool
	// CloseConn closes the connection after this response (or instead of it
	// when the response is None).
	CloseConn bool
	// Throttle is the client quota throttle time (KIP-219): once this
	// response is sent (or, for None, once it would have been) the server
	// reads no further request of the connection for this long, as
	// Kafka's SocketServer mutes a throttled channel. The response's
	// throttle_time_ms carries the same time (the handlers set it).
	Throttle time.Duration
}

// Chunk is one piece of a pre-encoded body: bytes, a file region sent
// with sendfile at an explicit offset, or a stream produced while it is
// written.
type Chunk struct {
	Bytes  []byte
	Region storage.Region // used when Bytes is nil and Region.Len > 0
	Stream Stream         // used when Bytes is nil and Stream is not nil
}

// Stream is a body chunk whose bytes are produced while the response is
// written, so a large body need not sit in memory at once (Fetch v0-v3
// down-conversion, chunked as KIP-283's LazyDownConversionRecordsSend).
// Its length is fixed when the body is built (it is in the size prefix).
type Stream interface {
	// Len is the exact number of bytes Emit produces.
	Len() int64
	// Emit produces the bytes in order through emit, in pieces of any
	// size; a piece may be reused once emit returns. An error (or a total
	// other than Len) aborts the response and closes the connection, as a
	// short sendfile region does.
	Emit(emit func([]byte) error) error
}

// Body is a pre-encoded response body. Release (may be nil) runs once after
// the body was written or abandoned; it releases segment references.
type Body struct {
	Chunks  []Chunk
	Size    int64 // total bytes of all chunks
	Release func()
}

// Reply is a handler's answer, now or later.
type Reply struct {
	now   Response
	later <-chan Response
	then  func(Response) Response // applied once to the resolved response (Then)
}

// Then returns r with f applied to its response when it resolves (on the
// goroutine that resolves it: the connection's writer for a Later
// reply). The quota layer uses it to record a response's bytes and set
// its throttle time once the response exists. f must not block.
func (r Reply) Then(f func(Response) Response) Reply {
	if prev := r.then; prev != nil {
		r.then = func(resp Response) Response { return f(prev(resp)) }
	} else {
		r.then = f
	}
	return r
}

func (r Reply) finish(resp Response) Response {
	if r.then != nil {
		return r.then(resp)
	}
	return resp
}

// Now answers immediately.
func Now(r Response) Reply { return Reply{now: r} }

// Later answers when ch delivers one Response (ch should be buffered 1).
func Later(ch <-chan Response) Reply { return Reply{later: ch} }

// Resolve blocks until the response is available (ctx cancels the wait;
// then ok is false).
func (r Reply) Resolve(ctx context.Context) (resp Response, ok bool) {
	if r.later == nil {
		return r.finish(r.now), true
	}
	select {
	case resp = <-r.later:
		return r.finish(resp), true
	case <-ctx.Done():
		return Response{}, false
	}
}

// ApiRange is one API key and the versions Gregor serves for it.
type ApiRange struct {
	Key        int16
	MinVersion int16
	MaxVersion int16
}

// Dispatcher routes decoded requests to handlers. The server calls Handle
// only for (key, version) pairs inside Supported(); others get
// UNSUPPORTED_VERSION from the server (ApiVersions excepted, see KIP-511).
type Dispatcher interface {
	Handle(rc *RequestContext, req kmsg.Request) Reply
	Supported() []ApiRange
}

// TryResolve returns the response if it is available without waiting (a Now
// reply, or a Later whose channel has delivered). A delivered Later response
// is consumed: call Resolve afterwards only when ok was false. The
// connection writer uses it to coalesce ready responses into one write and
// to flush what it holds before it blocks.
func (r Reply) TryResolve() (resp Response, ok bool) {
	if r.later == nil {
		return r.finish(r.now), true
	}
	select {
	case resp = <-r.later:
		return r.finish(resp), true
	default:
		return Response{}, false
	}
}
