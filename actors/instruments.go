package actors

import (
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/extensions"
	"go.uber.org/zap"
)

// Instruments is the operability side of one actor system (one broker):
// the live actor tree with restart counts and mailbox depths, run-time
// switchable message tracing (trace.go), fault injection (faults.go) and a
// hook through which counted events reach the broker's metrics (Event).
// NewSystem attaches one to every system it creates; find it with
// InstrumentsOf. Every actor spawned through Props reports to it. Safe for
// concurrent use.
type Instruments struct {
	sys *actor.ActorSystem
	log *zap.Logger

	mu       sync.RWMutex
	cells    map[string]*cell  // live actors by path (PID id)
	restarts map[string]uint64 // restarts per kind since start, dead actors included

	sink atomic.Pointer[func(Event)]

	tracing tracer
}

// Event is one counted occurrence, for metrics: Name is one of the Event*
// constants, Kind the actor kind (or API name / fault action, see each
// constant), Detail free-form (the fault target, …).
type Event struct {
	Name   string
	Kind   string
	Detail string
	// Value is the observation of events that carry one (a duration in
	// seconds for the *_latency and *_load events); 0 for counts.
	Value float64
}

// Event names. Labels in Event.Kind are given per name.
const (
	// EventActorRestart: an actor restarted after a failure (Kind = actor kind).
	EventActorRestart = "actor_restart"
	// EventFaultInjected: a fault was injected (Kind = action: kill, stop,
	// delay, or request_drop/request_error/request_delay; Detail = target).
	EventFaultInjected = "fault_injected"
	// EventIsrShrink / EventIsrExpand: a leader hosted here changed its ISR
	// (Kafka kafka.server:type=ReplicaManager,name=IsrShrinksPerSec /
	// IsrExpandsPerSec). Kind = topic.
	EventIsrShrink = "isr_shrink"
	EventIsrExpand = "isr_expand"
	// EventLeaderElection / EventUncleanElection: the controller elected a
	// partition leader (Kafka ControllerStats LeaderElectionRateAndTimeMs,
	// UncleanLeaderElectionsPerSec).
	EventLeaderElection  = "leader_election"
	EventUncleanElection = "unclean_election"
	// EventGroupRebalance: a consumer group started a rebalance (Kind = group).
	EventGroupRebalance = "group_rebalance"
	// EventTxnTimedOutAbort: the transaction coordinator wrote the abort
	// (PrepareAbort, epoch bumped) of a transaction older than its
	// transaction.timeout.ms (Kind = transactional id).
	EventTxnTimedOutAbort = "txn_timed_out_abort"
	// EventTxnMarkersLatency: every partition of a transaction has its
	// marker (Kind = "commit" or "abort"; Value = seconds from the first
	// WriteTxnMarkers sent to the last partition answered).
	EventTxnMarkersLatency = "txn_markers_latency"
	// EventTxnPartitionLoad: a __transaction_state partition was loaded
	// (Kind = partition number; Value = seconds the load took, Kafka's
	// transaction-coordinator-metrics partition-load-time).
	EventTxnPartitionLoad = "txn_partition_load"
)

type instrumentsExt struct{ *Instruments }

var extID = extensions.NextExtensionID()

func (instrumentsExt) ExtensionID() extensions.ExtensionID { return extID }

// attachInstruments creates the system's Instruments and registers it as
// a protoactor extension (one slice index per lookup, no global map).
func attachInstruments(sys *actor.ActorSystem, log *zap.Logger) *Instruments {
	if log == nil {
		log = zap.NewNop()
	}
	in := &Instruments{sys: sys, log: log, cells: make(map[string]*cell), restarts: make(map[string]uint64)}
	sys.Extensions.Register(instrumentsExt{in})
	return in
}

// InstrumentsOf returns the Instruments of a system made by NewSystem, or
// nil for a system made otherwise.
func InstrumentsOf(sys *actor.ActorSystem) *Instruments {
	if sys == nil || sys.Extensions == nil {
		return nil
	}
	if e, ok := sys.Extensions.Get(extID).(instrumentsExt); ok {
		return e.Instruments
	}
	return nil
}

// Emit counts one event on sys's Instruments (a no-op for nil or foreign
// systems, or before a sink is installed). It is the one-line hook other
// packages call: actors.Emit(sys, actors.EventIsrShrink, topic, "").
func Emit(sys *actor.ActorSystem, name, kind, detail string) {
	if in := InstrumentsOf(sys); in != nil {
		in.emit(Event{Name: name, Kind: kind, Detail: detail})
	}
}

// EmitValue is Emit for an event that carries an observation (Value).
func EmitValue(sys *actor.ActorSystem, name, kind string, value float64) {
	if in := InstrumentsOf(sys); in != nil {
		in.emit(Event{Name: name, Kind: kind, Value: value})
	}
}

// OnEvent installs the function that receives every Event (the broker's
// metrics); nil removes it. It runs on the emitting goroutine (an actor's,
// a supervisor's) and must not block.
func (in *Instruments) OnEvent(f func(Event)) {
	if f == nil {
		in.sink.Store(nil)
		return
	}
	in.sink.Store(&f)
}

func (in *Instruments) emit(e Event) {
	if f := in.sink.Load(); f != nil {
		(*f)(e)
	}
}

// cell is one spawned actor as the instruments see it. It is created by
// Props (per spawn) and shared by the actor's mailbox wrapper and its
// receiver middleware; it outlives restarts (same PID, same mailbox).
type cell struct {
	in       *Instruments // set at the first Started
	pid      *actor.PID
	path     string
	kind     string
	mb       actor.Mailbox
	restarts atomic.Int64
	received atomic.Uint64
	trace    atomic.Bool // this actor's messages are traced now
}

// ActorInfo is one live actor in GET /actors.
type ActorInfo struct {
	// Path is the actor's PID id, its names from the root joined by "/"
	// (a partition actor: "replica-manager/<topic>-<partition>").
	Path string `json:"path"`
	// Kind groups actors of one role: partition, replica-manager, fetcher,
	// fetcher-manager, group, group-coordinator, log-manager,
	// controller-channel, … (KindOf).
	Kind string `json:"kind"`
	// Restarts counts restarts after failures of this actor (same PID).
	Restarts int64 `json:"restarts"`
	// Mailbox is the number of user messages waiting (-1 when unknown).
	Mailbox int `json:"mailbox"`
	// Received counts user messages handled since the actor was spawned.
	Received uint64 `json:"received"`
	// Traced says whether tracing is on for this actor now.
	Traced bool `json:"traced"`
}

// Actors lists the live actors sorted by path.
func (in *Instruments) Actors() []ActorInfo {
	in.mu.RLock()
	out := make([]ActorInfo, 0, len(in.cells))
	for _, c := range in.cells {
		out = append(out, c.info())
	}
	in.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Actor returns one live actor's info.
func (in *Instruments) Actor(path string) (ActorInfo, bool) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	c, ok := in.cells[path]
	if !ok {
		return ActorInfo{}, false
	}
	return c.info(), true
}

func (c *cell) info() ActorInfo {
	depth := -1
	if c.mb != nil {
		depth = c.mb.UserMessageCount()
	}
	return ActorInfo{Path: c.path, Kind: c.kind, Restarts: c.restarts.Load(), Mailbox: depth,
		Received: c.received.Load(), Traced: c.trace.Load()}
}

// RestartsByKind is the number of restarts per actor kind since the
// system started, counting actors that have since stopped.
func (in *Instruments) RestartsByKind() map[string]uint64 {
	in.mu.RLock()
	defer in.mu.RUnlock()
	out := make(map[string]uint64, len(in.restarts))
	for k, v := range in.restarts {
		out[k] = v
	}
	return out
}

// MailboxByKind sums the mailbox depth of live actors per kind, and counts
// the live actors per kind.
func (in *Instruments) MailboxByKind() (depth, count map[string]int) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	depth, count = make(map[string]int), make(map[string]int)
	for _, c := range in.cells {
		count[c.kind]++
		if c.mb != nil {
			depth[c.kind] += c.mb.UserMessageCount()
		}
	}
	return depth, count
}

func (in *Instruments) register(c *cell) {
	in.mu.Lock()
	in.cells[c.path] = c
	in.mu.Unlock()
	c.trace.Store(in.tracing.matches(c))
}

func (in *Instruments) unregister(c *cell) {
	in.mu.Lock()
	if in.cells[c.path] == c {
		delete(in.cells, c.path)
	}
	in.mu.Unlock()
}

func (in *Instruments) restarted(c *cell) {
	c.restarts.Add(1)
	in.mu.Lock()
	in.restarts[c.kind]++
	in.mu.Unlock()
	in.emit(Event{Name: EventActorRestart, Kind: c.kind, Detail: c.path})
}

// pick chooses a live actor: by exact path, else a random one of kind,
// else (kind == "") a random one of any kind.
func (in *Instruments) pick(path, kind string) (*cell, bool) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	if path != "" {
		c, ok := in.cells[path]
		return c, ok
	}
	var cands []*cell
	for _, c := range in.cells {
		if kind == "" || c.kind == kind {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return nil, false
	}
	return cands[rand.IntN(len(cands))], true
}

// childKinds names the kind of a supervisor's children, by the
// supervisor's name (the names used by partition, replication/fetcher and
// actors/coordinator).
var childKinds = map[string]string{
	"replica-manager":   "partition",
	"fetcher-manager":   "fetcher",
	"group-coordinator": "group",
}

// KindOf derives an actor's kind from its path: a known supervisor's child
// takes the child kind ("replica-manager/t-0" → "partition"); otherwise the
// last path element with numeric and id suffixes dropped
// ("controller-channel-2-1699…" → "controller-channel", "log-manager" →
// "log-manager"). protoactor's generated names ("$12") give "anonymous".
func KindOf(path string) string {
	parent, name := "", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		parent, name = path[:i], path[i+1:]
		if j := strings.LastIndexByte(parent, '/'); j >= 0 {
			parent = parent[j+1:]
		}
	}
	if k, ok := childKinds[parent]; ok {
		return k
	}
	if strings.HasPrefix(name, "$") {
		return "anonymous"
	}
	parts := strings.Split(name, "-")
	for len(parts) > 1 && isNumber(parts[len(parts)-1]) {
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, "-")
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
