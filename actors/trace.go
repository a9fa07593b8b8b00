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
	// Broker is the broker.id of the broker that recorded the event (set
	// by the admin listener through SetTraceBroker; request events carry
	// it too), so events merged from several brokers stay attributable.
	Broker int32 `json:"broker"`
	// Partition is the "<topic>-<partition>" the event concerns: a
	// partition actor's own partition; set by TraceDetailer messages of
	// other actors that concern one partition.
	Partition string `json:"partition,omitempty"`
	// Ranges are the offset ranges of the record batches the message
	// carried or appended, per partition: what links a produce on the
	// leader to the fetch response and the append on each follower.
	Ranges []TraceRange `json:"ranges,omitempty"`
	// Values are named numbers a TraceDetailer reports (replica,
	// fetch_offset, hw_before, hw, log_end_offset, released, …).
	Values map[string]int64 `json:"values,omitempty"`
	// Detail is a one-line human summary from a TraceDetailer.
	Detail string `json:"detail,omitempty"`
}

// TraceRange is the offsets [First, Last] (inclusive: the first batch's
// base offset and the last batch's last offset) of the record batches a
// traced message carried for one partition.
type TraceRange struct {
	Partition string `json:"partition"` // "<topic>-<partition>"
	First     int64  `json:"first"`
	Last      int64  `json:"last"`
}

// TraceDetailer is implemented by messages that describe themselves in a
// trace event: TraceDetail fills Ranges, Values, Detail (and Partition or
// Topics for actors that are not partition actors). It is called on the
// actor's goroutine right after the actor handled the message, and only
// while the actor is traced, so it may read what the handling recorded in
// the message and costs nothing with tracing off.
type TraceDetailer interface{ TraceDetail(e *TraceEvent) }

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
	broker  atomic.Int32 // TraceEvent.Broker of actor events
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

// SetTraceBroker sets the broker id stamped on actor trace events
// (TraceEvent.Broker); the admin listener calls it at start.
func (in *Instruments) SetTraceBroker(id int32) { in.tracing.broker.Store(id) }

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
		Broker:        t.broker.Load(),
	}
	if c.kind == "partition" {
		e.Partition = c.path[strings.LastIndexByte(c.path, '/')+1:]
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
	if d, ok := env.Message.(TraceDetailer); ok {
		d.TraceDetail(&e)
		if len(e.Topics) > 0 {
			// A message of a multi-partition actor (a fetcher's response)
			// names its topics: apply the topic filter to them.
			t.mu.Lock()
			topic := t.filter.Topic
			t.mu.Unlock()
			if topic != "" && !contains(e.Topics, topic) {
				return
			}
		}
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
