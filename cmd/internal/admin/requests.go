package admin

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/wire"
	"gregor/wire/server"
)

// Request fault actions (POST /faults with "request").
const (
	// RequestDrop closes the connection instead of answering (a lost
	// network path: the client times out or sees the connection drop).
	RequestDrop = "drop"
	// RequestError answers with ErrorCode in every partition (Produce) or
	// in the response's top-level error code (other APIs that have one).
	RequestError = "error"
	// RequestDelay holds the request Delay before handling it; the
	// connection's later requests wait behind it, as behind a slow broker.
	RequestDelay = "delay"
)

// RequestFault is a fault on one request type of this broker.
type RequestFault struct {
	Action    string        `json:"action"`
	Key       int16         `json:"key"`
	ErrorCode int16         `json:"error_code,omitempty"`
	Delay     time.Duration `json:"-"`
	// Count is how many requests it hits before it clears itself.
	Count int64 `json:"count"`
}

type reqFault struct {
	RequestFault
	left atomic.Int64
}

// requestFaults is the table of active request faults; the dispatch fast
// path is one atomic load when it is empty.
type requestFaults struct {
	mu     sync.Mutex
	active atomic.Pointer[[]*reqFault]
}

func (rf *requestFaults) add(f RequestFault) error {
	switch f.Action {
	case RequestDrop:
	case RequestDelay:
		if f.Delay <= 0 {
			return errors.New("request delay fault needs a positive ms")
		}
	case RequestError:
		if f.ErrorCode == 0 || kerr.ErrorForCode(f.ErrorCode) == nil {
			return fmt.Errorf("request error fault needs a known non-zero Kafka error code, got %d", f.ErrorCode)
		}
		if f.Key != 0 && !hasTopLevelError(f.Key) {
			return fmt.Errorf("request error fault: %s responses have no top-level error code (Produce or APIs with one)", apiName(f.Key))
		}
	default:
		return fmt.Errorf("unknown request fault action %q (want drop, error or delay)", f.Action)
	}
	if kmsg.RequestForKey(f.Key) == nil {
		return fmt.Errorf("unknown API key %d", f.Key)
	}
	if f.Count <= 0 {
		f.Count = 1
	}
	rf.mu.Lock()
	defer rf.mu.Unlock()
	var list []*reqFault
	if p := rf.active.Load(); p != nil {
		list = append(list, *p...)
	}
	nf := &reqFault{RequestFault: f}
	nf.left.Store(f.Count)
	list = append(list, nf)
	rf.active.Store(&list)
	return nil
}

// take returns the fault for key that hits this request, if any.
func (rf *requestFaults) take(key int16) *reqFault {
	p := rf.active.Load()
	if p == nil {
		return nil
	}
	for _, f := range *p {
		if f.Key == key && f.left.Add(-1) >= 0 {
			if f.left.Load() <= 0 {
				rf.remove(f)
			}
			return f
		}
	}
	return nil
}

func (rf *requestFaults) remove(f *reqFault) {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	p := rf.active.Load()
	if p == nil {
		return
	}
	var list []*reqFault
	for _, g := range *p {
		if g != f {
			list = append(list, g)
		}
	}
	if len(list) == 0 {
		rf.active.Store(nil)
	} else {
		rf.active.Store(&list)
	}
}

func (rf *requestFaults) list() []RequestFault {
	p := rf.active.Load()
	if p == nil {
		return nil
	}
	out := make([]RequestFault, 0, len(*p))
	for _, f := range *p {
		r := f.RequestFault
		r.Count = max(f.left.Load(), 0)
		out = append(out, r)
	}
	return out
}

func hasTopLevelError(key int16) bool {
	r := kmsg.ResponseForKey(key)
	if r == nil {
		return false
	}
	f, ok := reflect.TypeOf(r).Elem().FieldByName("ErrorCode")
	return ok && f.Type == int16Type
}

// dispatcher wraps the broker's handlers with request faults and the
// "received" trace event.
type dispatcher struct {
	next wire.Dispatcher
	s    *Server
}

func (d *dispatcher) Supported() []wire.ApiRange { return d.next.Supported() }

func (d *dispatcher) Handle(rc *wire.RequestContext, req kmsg.Request) wire.Reply {
	if in := d.s.inst; in != nil && in.RequestTracing() {
		in.PublishRequest(actors.TraceEvent{Time: time.Now(), Message: apiName(rc.Key) + " received",
			CorrelationID: rc.CorrelationID, Client: rc.ClientID, Topics: requestTopics(req), Broker: d.s.brokerID})
	}
	f := d.s.reqFaults.take(rc.Key)
	if f == nil {
		return d.next.Handle(rc, req)
	}
	d.s.log.Warn("request fault injected", zap.String("action", f.Action), zap.String("api", apiName(rc.Key)),
		zap.Int32("correlation_id", rc.CorrelationID), zap.String("client", rc.ClientID))
	d.s.metrics.faults.WithLabelValues("request_" + f.Action).Inc()
	switch f.Action {
	case RequestDrop:
		return wire.Now(wire.Response{None: true, CloseConn: true})
	case RequestDelay:
		select {
		case <-time.After(f.Delay):
		case <-rc.Ctx.Done():
		}
		return d.next.Handle(rc, req)
	default:
		return wire.Now(wire.Response{Msg: errorResponse(req, f.ErrorCode)})
	}
}

// errorResponse answers req with code: every partition of a Produce, or
// the top-level error code of other APIs.
func errorResponse(req kmsg.Request, code int16) kmsg.Response {
	resp := req.ResponseKind()
	if preq, ok := req.(*kmsg.ProduceRequest); ok {
		presp := resp.(*kmsg.ProduceResponse)
		for _, t := range preq.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.BaseOffset = p.Partition, code, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			presp.Topics = append(presp.Topics, rt)
		}
		return presp
	}
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode"); f.IsValid() && f.CanSet() && f.Type() == int16Type {
		f.SetInt(int64(code))
	}
	return resp
}

// requestTopics lists the topics of a Produce or Fetch (for trace filters).
func requestTopics(req kmsg.Request) []string {
	var out []string
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		for _, t := range r.Topics {
			out = append(out, t.Topic)
		}
	case *kmsg.FetchRequest:
		for _, t := range r.Topics {
			out = append(out, t.Topic)
		}
	}
	return out
}

// RequestDone implements server.RequestObserver: request metrics and the
// "sent" trace event.
func (s *Server) RequestDone(t *server.RequestTiming) {
	s.metrics.requestDone(t)
	if in := s.inst; in != nil && in.RequestTracing() {
		in.PublishRequest(actors.TraceEvent{Time: t.Sent, Message: apiName(t.Key) + " sent",
			CorrelationID: t.CorrelationID, Client: t.ClientID, Topics: requestTopics(t.Request), Broker: s.brokerID,
			QueueMicros: t.Resolved.Sub(t.Received).Microseconds(), HandleMicros: t.Sent.Sub(t.Resolved).Microseconds()})
	}
}

// parseKey accepts an API name ("Produce") or number ("0").
func parseKey(s string) (int16, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return int16(n), nil
	}
	for k, n := range apiNames {
		if n == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown API %q", s)
}
