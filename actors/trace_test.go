package actors

import (
	"sync/atomic"
	"testing"
	"time"
)

// detailed is a message that describes itself in a trace.
type detailed struct {
	topics []string
	calls  *atomic.Int32
}

func (d *detailed) TraceDetail(e *TraceEvent) {
	d.calls.Add(1)
	e.Topics = d.topics
	e.Ranges = []TraceRange{{Partition: e.Partition, First: 40, Last: 49}}
	e.Values = map[string]int64{"hw": 50}
	e.Detail = "appended"
}

// TestTraceDetailer: a traced message's TraceDetail fills the event, which
// carries the broker id and the partition actor's partition; an event
// naming topics outside the filter's topic is dropped; with tracing off
// TraceDetail is never called.
func TestTraceDetailer(t *testing.T) {
	tr := newTree(t, &BackoffStrategy{})
	events, cancel := tr.in.SubscribeTrace(16)
	defer cancel()
	tr.in.SetTraceBroker(7)
	tr.in.SetTrace(TraceFilter{Enabled: true, Kinds: []string{"partition"}, Topic: "orders"})
	var calls atomic.Int32
	send := func(m any) {
		tr.sys.Root.Send(tr.child, m)
		tr.sys.Root.Send(tr.child, &ping{corr: 5})
		<-tr.pings
	}
	next := func() TraceEvent {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-time.After(5 * time.Second):
			t.Fatal("no trace event")
			return TraceEvent{}
		}
	}

	send(&detailed{calls: &calls})
	e := next()
	if e.Message != "*actors.detailed" || e.Broker != 7 || e.Partition != "orders-3" || e.Detail != "appended" ||
		len(e.Ranges) != 1 || e.Ranges[0] != (TraceRange{Partition: "orders-3", First: 40, Last: 49}) || e.Values["hw"] != 50 {
		t.Errorf("detailed event %+v", e)
	}
	if e := next(); e.Message != "*actors.ping" || e.Broker != 7 || e.Partition != "orders-3" || e.Detail != "" {
		t.Errorf("ping event %+v", e)
	}

	send(&detailed{topics: []string{"payments"}, calls: &calls})
	if e := next(); e.Message != "*actors.ping" {
		t.Errorf("event of a message about another topic passed the topic filter: %+v", e)
	}
	send(&detailed{topics: []string{"payments", "orders"}, calls: &calls})
	if e := next(); e.Message != "*actors.detailed" {
		t.Errorf("event of a message about the filter's topic: %+v", e)
	}
	next() // its ping
	if n := calls.Load(); n != 3 {
		t.Errorf("TraceDetail called %d times, want 3", n)
	}

	tr.in.SetTrace(TraceFilter{})
	send(&detailed{calls: &calls})
	if n := calls.Load(); n != 3 {
		t.Errorf("TraceDetail called with tracing off (%d calls)", n)
	}
	select {
	case e := <-events:
		t.Errorf("event with tracing off: %+v", e)
	default:
	}
}
