package actors

import (
	"math/rand/v2"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// BackoffStrategy is a protoactor SupervisorStrategy that restarts a failed
// child after an exponentially growing, jittered delay, and stops it for
// good once it has failed more than MaxRetries times within Window.
//
// Delay before the n-th restart within Window (n = 1, 2, …):
// min(Max, Initial·2^(n-1)), then a uniformly random value in [d/2, d]
// ("equal jitter") so that many partitions failing together (a bad disk) do
// not restart in lockstep. Failures older than Window are forgotten, so a
// child that fails now and then restarts fast and is never given up on.
//
// Restarts are scheduled with time.AfterFunc: HandleFailure runs on the
// supervisor's mailbox goroutine and must not block it. While the delay
// runs the child's mailbox stays suspended (messages queue up, none are
// lost) — protoactor suspends it before reporting the failure.
//
// Zero fields take the defaults Initial 100ms, Max 10s, MaxRetries 5,
// Window 60s (the partition actor's policy in the README's supervision
// table). A negative
// MaxRetries (NeverGiveUp) restarts forever: the delay still grows to Max
// while failures keep coming within Window, and OnGiveUp never runs — the
// policy of actors that have nothing to fall back on (replica fetchers,
// controller channels: a stopped one would silently stop replication or
// controller requests to a peer).
type BackoffStrategy struct {
	Initial    time.Duration
	Max        time.Duration
	MaxRetries int // failures within Window before the child is stopped; < 0 = never
	Window     time.Duration
	// OnGiveUp runs (on the supervisor's goroutine, after StopChildren was
	// sent) when the child is stopped for failing too often. It must not block.
	OnGiveUp func(child *actor.PID, reason any)
	// OnRestart, if set, runs when a restart is scheduled, with the delay chosen.
	OnRestart func(child *actor.PID, reason any, delay time.Duration)
}

var _ actor.SupervisorStrategy = (*BackoffStrategy)(nil)

// NeverGiveUp is the MaxRetries value that makes a BackoffStrategy restart
// its child after every failure, however many.
const NeverGiveUp = -1

func (s *BackoffStrategy) params() (initial, max time.Duration, retries int, window time.Duration) {
	initial, max, retries, window = s.Initial, s.Max, s.MaxRetries, s.Window
	if initial <= 0 {
		initial = 100 * time.Millisecond
	}
	if max <= 0 {
		max = 10 * time.Second
	}
	if max < initial {
		max = initial
	}
	if retries == 0 {
		retries = 5
	}
	if window <= 0 {
		window = time.Minute
	}
	return
}

// Delay is the un-jittered delay before the n-th restart in a window (n >= 1).
func (s *BackoffStrategy) Delay(n int) time.Duration {
	initial, max, _, _ := s.params()
	d := initial
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d
}

// jitter picks a delay uniformly in [d/2, d].
func jitter(d time.Duration) time.Duration {
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(d-half+1)
}

// HandleFailure implements actor.SupervisorStrategy.
func (s *BackoffStrategy) HandleFailure(sys *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, rs *actor.RestartStatistics, reason any, _ any) {
	_, _, retries, window := s.params()
	// Forget failures that fell out of the window, then count this one.
	if rs.NumberOfFailures(window) == 0 {
		rs.Reset()
	}
	rs.Fail()
	n := rs.NumberOfFailures(window)
	if retries >= 0 && n > retries {
		rs.Reset()
		sys.EventStream.Publish(&actor.SupervisorEvent{Child: child, Reason: reason, Directive: actor.StopDirective})
		sup.StopChildren(child)
		if s.OnGiveUp != nil {
			s.OnGiveUp(child, reason)
		}
		return
	}
	delay := jitter(s.Delay(n))
	if s.OnRestart != nil {
		s.OnRestart(child, reason, delay)
	}
	time.AfterFunc(delay, func() {
		sys.EventStream.Publish(&actor.SupervisorEvent{Child: child, Reason: reason, Directive: actor.RestartDirective})
		sup.RestartChildren(child)
	})
}

// ManagerStrategy supervises the actors that own other actors' lifecycles
// (replica-manager, fetcher-manager, group-coordinator): 10 ms doubling to
// 1 s, never giving up, since a stopped manager could host, follow or
// coordinate nothing new. Their state lives outside the actor value, so a
// restart only costs the delay. Shared: the strategy keeps no per-child
// state of its own (protoactor passes the child's RestartStatistics).
var ManagerStrategy = &BackoffStrategy{Initial: 10 * time.Millisecond, Max: time.Second, MaxRetries: NeverGiveUp, Window: time.Minute}
