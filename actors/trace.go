package actors

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// TraceFilter selects what is traced. An actor is traced when tracing is
// Enabled, its kind is in Kinds (or Kinds is empty), its path equals
// Actor (or Actor is empty), and, for partition actors, its partition
// belongs to Topic (or Topic is empty). Request events (PublishRequest)
// pass when Kinds is empty or holds "request", and Topic (if set) is among
// their topics.
type TraceFilter struct {
	Enabled bool     `json:"enabled"`
	Kinds   []string `json:"kinds,omitempty"`
	Actor   string   `json:"actor,omitempty"`
	Topic   string   `json:"topic,omitempty"`
}

// TraceEvent is one traced message (one JSON line on GET /trace).
type TraceEvent struct {
	Time  time.Time `json:"time"`
	Actor string    `json:"actor"` // actor path; "" for request events
	Kind  string    `json:"kind"`  // actor kind, or "request"
	// Message is the Go type of the message ("*partition.Produce"); for
	// request events the API name and stage ("Produce received").
	Message string `json:"message"`
	Sender  string `json:"sender,omitempty"`
	// CorrelationID is the client request's correlation id when the
	// message carries one (Correlated), -1 otherwise.
	CorrelationID int32  `json:"correlation_id"`
	Client        string `json:"client,omitempty"`
	// QueueMicros is the time the message waited in the mailbox (for a
	// request: between the frame being read and the response being
	// ready); HandleMicros the time Receive took (request: time to send).
	QueueMicros  int64    `json:"queue_us"`
	HandleMicros int64    `json:"handle_us"`
	Topics       []string `json:"topics,omitempty"`
	Broker       int32    `json:"broker,omitempty"`
}

// Correlated is implemented by messages that carry the correlation id of
// the client request that caused them (partition.Produce), so a trace can
// follow one request from the connection into the actors.
type Correlated interface{ TraceCorrelationID() int32 }

// tracer holds the filter and the subscribers. Recording is done on the
// traced actor's goroutine and never blocks: a full subscriber buffer
// drops the event and counts it.
type tracer struct {
	mu     sync.Mutex
	filter TraceFilter
	subs   map[int]chan TraceEvent
	nextID int
	// any is true while tracing is enabled (fast check for request events).
	any     atomic.Bool
	dropped atomic.Uint64
}

func (t *tracer) matches(c *cell) bool {
	t.mu.Lock()
	f := t.filter
	t.mu.Unlock()
	return f.matchActor(c.path, c.kind)
}

func (f TraceFilter) matchActor(path, kind string) bool {
	if !f.Enabled {
		return false
	}
	if len(f.Kinds) > 0 && !contains(f.Kinds, kind) {
		return false
	}
	if f.Actor != "" && f.Actor != path {
		return false
	}
	if f.Topic != "" && kind == "partition" {
		name := path[strings.LastIndexByte(path, '/')+1:]
		i := strings.LastIndexByte(name, '-')
		if i < 0 || name[:i] != f.Topic {
			return false
		}
	}
	return true
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// SetTrace replaces the trace filter and switches tracing on or off for
// every live actor accordingly (new actors check it when they start).
func (in *Instruments) SetTrace(f TraceFilter) {
	in.tracing.mu.Lock()
	in.tracing.filter = f
	in.tracing.any.Store(f.Enabled)
	in.tracing.mu.Unlock()
	in.mu.RLock()
	for _, c := range in.cells {
		c.trace.Store(f.matchActor(c.path, c.kind))
	}
	in.mu.RUnlock()
}

// Trace returns the current filter.
func (in *Instruments) Trace() TraceFilter {
	in.tracing.mu.Lock()
	defer in.tracing.mu.Unlock()
	return in.tracing.filter
}

// TraceDropped counts events dropped because a subscriber was slow.
func (in *Instruments) TraceDropped() uint64 { return in.tracing.dropped.Load() }

// SubscribeTrace returns a channel of trace events (buffer buf) and a
// cancel that unsubscribes and closes it. Events that find the buffer full
// are dropped (TraceDropped).
func (in *Instruments) SubscribeTrace(buf int) (<-chan TraceEvent, func()) {
	if buf <= 0 {
		buf = 1024
	}
	ch := make(chan TraceEvent, buf)
	t := &in.tracing
	t.mu.Lock()
	if t.subs == nil {
		t.subs = make(map[int]chan TraceEvent)
	}
	id := t.nextID
	t.nextID++
	t.subs[id] = ch
	t.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			t.mu.Lock()
			delete(t.subs, id)
			t.mu.Unlock()
			close(ch)
		})
	}
}

func (t *tracer) publish(e TraceEvent) {
	t.mu.Lock()
	for _, ch := range t.subs {
		select {
		case ch <- e:
		default:
			t.dropped.Add(1)
		}
	}
	t.mu.Unlock()
}

func (t *tracer) record(c *cell, env *actor.MessageEnvelope, enqueued, start, end time.Time) {
	e := TraceEvent{
		Time:          start,
		Actor:         c.path,
		Kind:          c.kind,
		Message:       fmt.Sprintf("%T", env.Message),
		CorrelationID: -1,
		HandleMicros:  end.Sub(start).Microseconds(),
	}
	if env.Sender != nil {
		e.Sender = env.Sender.GetId()
	}
	if !enqueued.IsZero() {
		e.QueueMicros = start.Sub(enqueued).Microseconds()
	}
	if cm, ok := env.Message.(Correlated); ok {
		e.CorrelationID = cm.TraceCorrelationID()
	}
	t.publish(e)
}

// RequestTracing reports whether request events are wanted now (a cheap
// check for the connection-side hook).
func (in *Instruments) RequestTracing() bool { return in.tracing.any.Load() }

// PublishRequest records a connection-side event of a client request (its
// Kind is set to "request") if the filter lets it through.
func (in *Instruments) PublishRequest(e TraceEvent) {
	t := &in.tracing
	if !t.any.Load() {
		return
	}
	t.mu.Lock()
	f := t.filter
	t.mu.Unlock()
	if len(f.Kinds) > 0 && !contains(f.Kinds, "request") && !contains(f.Kinds, "partition") {
		return
	}
	if f.Topic != "" && !contains(e.Topics, f.Topic) {
		return
	}
	e.Kind = "request"
	t.publish(e)
}
