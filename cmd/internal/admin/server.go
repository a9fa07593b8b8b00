// Package admin is the broker's HTTP admin listener (admin.listener,
// Gregor's own key, off unless set): Prometheus metrics with Kafka's metric
// meanings (/metrics), the live actor tree (/actors), fault injection on
// actors and request types (/faults), actor-level tracing as JSON lines
// (/trace) and Go's pprof (/debug/pprof/). It also wraps the broker's
// request dispatcher (request faults, trace events) and observes every
// answered request (request metrics). It binds only the configured
// address. Anyone who reaches it can kill actors and fail requests, so it
// can serve HTTPS (Options.TLS, admin.listener.ssl.*) with client
// certificates required and require a bearer token
// (admin.listener.auth.token.file), and Start refuses to bind beyond
// loopback without one of the two (protect.go).
package admin

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/actors/txncoordinator"
	"gregor/replication/metadata"
	"gregor/wire"
)

// Options configures Start.
type Options struct {
	// Addr is admin.listener, host:port ("127.0.0.1:0" picks a free port).
	Addr     string
	BrokerID int32
	// System is the broker's actor system (made by actors.NewSystem): its
	// Instruments give /actors, actor faults and tracing.
	System *actor.ActorSystem
	// Partitions lists the hosted partitions (partition gauges); may be nil.
	Partitions PartitionSource
	// Metadata returns the broker's metadata snapshot (active controller,
	// offline partitions); may be nil.
	Metadata func() *metadata.Snapshot
	// ActiveController reports whether this broker's controller is the
	// active one (holds /controller with the epoch it won), asked of the
	// controller itself so a deposed controller reports 0 at once; nil =
	// the metadata snapshot's controller id decides.
	ActiveController func() bool
	// ControllerEventQueue is the number of controller events waiting
	// behind the one being handled (controller.EventQueueSize, asked of the
	// controller actor, which answers while an event waits for ZooKeeper);
	// ok false when it could not answer. nil = no gauge.
	ControllerEventQueue func() (n int, ok bool)
	// Transactions is the transaction coordinator's state
	// (txncoordinator.Coordinator.Stats, asked of its actors); ok false
	// when they could not answer. nil = no transaction gauges.
	Transactions func() (s txncoordinator.Stats, ok bool)
	// TLS makes the listener HTTPS (admin.listener.ssl.*, built by
	// tlsconf's Server); nil = plain HTTP. With ClientAuth
	// RequireAndVerifyClientCert (admin.listener.ssl.client.auth=required)
	// it may bind beyond loopback.
	TLS *tls.Config
	// TokenFile is admin.listener.auth.token.file: every request must
	// carry "Authorization: Bearer <the file's content, trimmed>"; "" =
	// no token. Read once by Start.
	TokenFile string
	Log       *zap.Logger
}

// Server is a running admin listener. Create with Start, stop with Close.
type Server struct {
	brokerID  int32
	inst      *actors.Instruments
	metrics   *metrics
	reqFaults requestFaults
	log       *zap.Logger

	ln   net.Listener
	http *http.Server
	done chan struct{} // closed by Close: ends /trace streams
	wg   sync.WaitGroup

	traceMu sync.Mutex // serialises filter changes by /trace readers

	txnVerify txnVerifyMetrics // TxnVerificationMetrics (txnverify_metrics.go)
	auth      authMetrics      // AuthMetrics (auth_metrics.go)
}

// Start binds o.Addr and serves the admin endpoints until Close.
func Start(o Options) (*Server, error) {
	if o.Addr == "" {
		return nil, errors.New("admin: no admin.listener address")
	}
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	var token string
	if o.TokenFile != "" {
		t, err := readToken("admin.listener.auth.token.file", o.TokenFile)
		if err != nil {
			return nil, err
		}
		token = t
	}
	s := &Server{brokerID: o.BrokerID, inst: actors.InstrumentsOf(o.System), log: log, done: make(chan struct{})}
	s.metrics = newMetrics(&stateCollector{brokerID: o.BrokerID, parts: o.Partitions, snapshot: o.Metadata, active: o.ActiveController, eventQueue: o.ControllerEventQueue, txns: o.Transactions, inst: s.inst})
	if s.inst != nil {
		s.inst.OnEvent(s.metrics.event)
		s.inst.SetTraceBroker(o.BrokerID)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		if s.inst != nil {
			s.inst.OnEvent(nil)
		}
		return nil, fmt.Errorf("admin.listener %s: %w", o.Addr, err)
	}
	if err := checkExposure(ln.Addr(), o.TLS, token); err != nil {
		ln.Close()
		if s.inst != nil {
			s.inst.OnEvent(nil)
		}
		return nil, err
	}
	if o.TLS != nil {
		ln = tls.NewListener(ln, o.TLS)
	}
	s.ln = ln
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorLog: zap.NewStdLog(log)}))
	mux.HandleFunc("GET /actors", s.handleActors)
	mux.HandleFunc("GET /faults", s.handleListFaults)
	mux.HandleFunc("POST /faults", s.handleFault)
	mux.HandleFunc("GET /trace", s.handleTrace)
	mux.HandleFunc("POST /trace", s.handleSetTrace)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	var handler http.Handler = mux
	if token != "" {
		handler = newTokenAuth(token, mux, s.metrics.reg, log)
	}
	s.http = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: zap.NewStdLog(log)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin listener stopped", zap.Error(err))
		}
	}()
	log.Info("admin listener started", zap.Stringer("addr", ln.Addr()), zap.Bool("tls", o.TLS != nil),
		zap.Bool("client_certs_required", requiresClientCerts(o.TLS)), zap.Bool("token", token != ""))
	return s, nil
}

// loopback reports whether a bound address accepts loopback connections
// only. The unspecified address (0.0.0.0, ::, an empty host) listens on
// every interface, so it is not loopback.
func loopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Dispatcher wraps the broker's dispatcher with request faults and request
// trace events.
func (s *Server) Dispatcher(next wire.Dispatcher) wire.Dispatcher {
	return &dispatcher{next: next, s: s}
}

// FetchBytesOut is the wire/handlers per-topic fetch hook
// (handlers.Broker.Metrics).
func (s *Server) FetchBytesOut(topic string, n int64, replication bool) {
	s.metrics.FetchBytesOut(topic, n, replication)
}

// Close stops the listener, ends /trace streams and waits for the serving
// goroutine. Idempotent.
func (s *Server) Close() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	close(s.done)
	if s.inst != nil {
		s.inst.OnEvent(nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = s.http.Close()
	}
	s.wg.Wait()
	return err
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func httpError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

func (s *Server) handleActors(w http.ResponseWriter, r *http.Request) {
	if s.inst == nil {
		writeJSON(w, http.StatusOK, []actors.ActorInfo{})
		return
	}
	list := s.inst.Actors()
	if kind := r.URL.Query().Get("kind"); kind != "" {
		n := 0
		for _, a := range list {
			if a.Kind == kind {
				list[n] = a
				n++
			}
		}
		list = list[:n]
	}
	writeJSON(w, http.StatusOK, list)
}

// FaultRequest is the POST /faults body. With Request set it is a request
// fault (actions drop, error, delay); otherwise an actor fault (kill,
// stop, delay) targeted by Actor, Kind or Random.
type FaultRequest struct {
	Action string `json:"action"`
	Actor  string `json:"actor,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Random bool   `json:"random,omitempty"`
	Count  int    `json:"count,omitempty"`
	Ms     int64  `json:"ms,omitempty"`
	// Request is the API ("Produce" or "0") of a request fault.
	Request string `json:"request,omitempty"`
	// Error is the Kafka error of an error fault: a name
	// as Kafka spells it now or spelled it before ("NOT_LEADER_OR_FOLLOWER",
	// "NOT_LEADER_FOR_PARTITION") or a code (see parseErrorCode).
	Error string `json:"error,omitempty"`
}

// FaultResponse is the POST /faults answer.
type FaultResponse struct {
	Injected []actors.Injected `json:"injected,omitempty"`
	Request  *RequestFault     `json:"request,omitempty"`
}

func (s *Server) handleFault(w http.ResponseWriter, r *http.Request) {
	var fr FaultRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fr); err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("bad fault body: %w", err))
		return
	}
	if fr.Request != "" {
		f, err := parseRequestFault(fr)
		if err == nil {
			err = s.reqFaults.add(f)
		}
		if err != nil {
			httpError(w, http.StatusBadRequest, err)
			return
		}
		s.log.Warn("request fault armed", zap.String("action", f.Action), zap.String("api", apiName(f.Key)),
			zap.Int16("error_code", f.ErrorCode), zap.Duration("delay", f.Delay), zap.Int64("count", f.Count))
		writeJSON(w, http.StatusOK, FaultResponse{Request: &f})
		return
	}
	if s.inst == nil {
		httpError(w, http.StatusServiceUnavailable, errors.New("no instrumented actor system"))
		return
	}
	inj, err := s.inst.Inject(actors.ActorFault{Action: fr.Action, Actor: fr.Actor, Kind: fr.Kind, Random: fr.Random,
		Count: fr.Count, Delay: time.Duration(fr.Ms) * time.Millisecond})
	switch {
	case errors.Is(err, actors.ErrNoSuchActor):
		httpError(w, http.StatusNotFound, err)
	case err != nil:
		httpError(w, http.StatusBadRequest, err)
	default:
		writeJSON(w, http.StatusOK, FaultResponse{Injected: inj})
	}
}

func parseRequestFault(fr FaultRequest) (RequestFault, error) {
	key, err := parseKey(fr.Request)
	if err != nil {
		return RequestFault{}, err
	}
	f := RequestFault{Action: fr.Action, Key: key, Delay: time.Duration(fr.Ms) * time.Millisecond, Count: int64(fr.Count)}
	if fr.Action == RequestError {
		code, err := parseErrorCode(fr.Error)
		if err != nil {
			return RequestFault{}, err
		}
		f.ErrorCode = code
	}
	return f, nil
}

func (s *Server) handleListFaults(w http.ResponseWriter, _ *http.Request) {
	list := s.reqFaults.list()
	if list == nil {
		list = []RequestFault{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"request_faults": list})
}

// handleSetTrace sets the trace filter (an actors.TraceFilter as JSON).
func (s *Server) handleSetTrace(w http.ResponseWriter, r *http.Request) {
	if s.inst == nil {
		httpError(w, http.StatusServiceUnavailable, errors.New("no instrumented actor system"))
		return
	}
	var f actors.TraceFilter
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&f); err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("bad trace filter: %w", err))
		return
	}
	s.traceMu.Lock()
	s.inst.SetTrace(f)
	s.traceMu.Unlock()
	s.log.Info("trace filter set", zap.Bool("enabled", f.Enabled), zap.Strings("kinds", f.Kinds), zap.String("actor", f.Actor), zap.String("topic", f.Topic))
	writeJSON(w, http.StatusOK, f)
}

// handleTrace streams trace events as JSON lines. Query parameters kind
// (repeatable or comma-separated), topic and actor switch tracing on with
// that filter for the stream's lifetime (the previous filter is restored
// when it ends); without them the stream shows what the current filter
// (POST /trace) selects. limit=N ends after N events, seconds=S after S
// seconds; otherwise it runs until the client goes away.
func (s *Server) handleTrace(w http.ResponseWriter, r *http.Request) {
	if s.inst == nil {
		httpError(w, http.StatusServiceUnavailable, errors.New("no instrumented actor system"))
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	var deadline <-chan time.Time
	if secs, err := strconv.ParseFloat(q.Get("seconds"), 64); err == nil && secs > 0 {
		t := time.NewTimer(time.Duration(secs * float64(time.Second)))
		defer t.Stop()
		deadline = t.C
	}
	events, cancel := s.inst.SubscribeTrace(4096)
	defer cancel()
	var kinds []string
	for _, k := range q["kind"] {
		for _, p := range strings.Split(k, ",") {
			if p = strings.TrimSpace(p); p != "" {
				kinds = append(kinds, p)
			}
		}
	}
	if len(kinds) > 0 || q.Get("topic") != "" || q.Get("actor") != "" {
		f := actors.TraceFilter{Enabled: true, Kinds: kinds, Topic: q.Get("topic"), Actor: q.Get("actor")}
		s.traceMu.Lock()
		prev := s.inst.Trace()
		s.inst.SetTrace(f)
		s.traceMu.Unlock()
		defer func() {
			s.traceMu.Lock()
			if cur := s.inst.Trace(); cur.Enabled == f.Enabled && cur.Topic == f.Topic && cur.Actor == f.Actor &&
				strings.Join(cur.Kinds, ",") == strings.Join(f.Kinds, ",") {
				s.inst.SetTrace(prev)
			}
			s.traceMu.Unlock()
		}()
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	enc := json.NewEncoder(w)
	n := 0
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return
			}
			if err := enc.Encode(e); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			n++
			if limit > 0 && n >= limit {
				return
			}
		case <-deadline:
			return
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}
