package server

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

// RequestObserver sees every answered request, for request metrics and
// tracing (cmd/internal/admin). RequestDone runs on the connection's
// writer goroutine right after the response was encoded into the write
// buffer (or handed to sendfile); it must not block and must not keep t,
// its request or its response.
type RequestObserver interface {
	RequestDone(t *RequestTiming)
}

// RequestTiming is one request's life on a connection, with Kafka's
// request-time split (kafka.network:type=RequestMetrics): queue time =
// Dispatched−Received (Gregor dispatches on the reader goroutine, so it
// is near zero), local time = Handled−Dispatched (the handler's own work),
// remote time = Resolved−Handled (waiting for a Later reply: acks=all, a
// fetch long poll, an actor; it includes waiting behind earlier responses
// of the connection), send time = Sent−Resolved.
type RequestTiming struct {
	Key           int16
	Version       int16
	CorrelationID int32
	ClientID      string
	Request       kmsg.Request
	Response      wire.Response
	Received      time.Time // frame fully read
	Dispatched    time.Time // Dispatcher.Handle called
	Handled       time.Time // Dispatcher.Handle returned
	Resolved      time.Time // the writer had the response
	Sent          time.Time // the response was written or buffered
}
