package actors

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Fault actions on actors (POST /faults "action").
const (
	// FaultKill makes the actor panic inside its Receive; its supervisor
	// restarts it (or, past the restart budget, stops it) per policy.
	FaultKill = "kill"
	// FaultStop stops the actor (protoactor Stop): no restart.
	FaultStop = "stop"
	// FaultDelay makes the actor sleep for Delay while handling the fault
	// message: its mailbox backs up as behind a slow disk.
	FaultDelay = "delay"
)

// ActorFault asks to inject a fault into actors of this system.
type ActorFault struct {
	Action string // FaultKill, FaultStop or FaultDelay
	// Target: Actor (an exact path, e.g. "replica-manager/t-0"), else a
	// random live actor of Kind, else (Random) a random live actor.
	Actor  string
	Kind   string
	Random bool
	// Count repeats the injection (default 1). For an Actor path the
	// messages queue in its mailbox, so count kills hit successive
	// incarnations; for Kind/Random every repeat picks a target afresh.
	Count int
	Delay time.Duration // FaultDelay only
}

// Injected is one executed injection (for the reply and the log).
type Injected struct {
	Action string `json:"action"`
	Actor  string `json:"actor"`
	Kind   string `json:"kind"`
}

// ErrNoSuchActor is returned when no live actor matches a fault's target.
var ErrNoSuchActor = errors.New("actors: no live actor matches the fault target")

// FaultPanic is the panic value of an injected kill (so logs and
// supervisors can tell injected failures from real ones).
type FaultPanic struct{ Actor string }

func (p FaultPanic) String() string { return "injected fault: kill " + p.Actor }

// injectedFault is the user message carrying a kill or delay; the
// instrument middleware executes it, the actor never sees it.
type injectedFault struct {
	action string
	delay  time.Duration
}

// Inject validates f and injects it; it returns what was injected. Every
// injection is logged and counted (EventFaultInjected).
func (in *Instruments) Inject(f ActorFault) ([]Injected, error) {
	switch f.Action {
	case FaultKill, FaultStop:
	case FaultDelay:
		if f.Delay <= 0 {
			return nil, errors.New("actors: delay fault needs a positive duration")
		}
	default:
		return nil, fmt.Errorf("actors: unknown fault action %q (want kill, stop or delay)", f.Action)
	}
	if f.Actor == "" && f.Kind == "" && !f.Random {
		return nil, errors.New("actors: fault needs a target: actor, kind or random")
	}
	n := f.Count
	if n <= 0 {
		n = 1
	}
	var done []Injected
	for i := 0; i < n; i++ {
		c, ok := in.pick(f.Actor, f.Kind)
		if !ok {
			if len(done) == 0 {
				return nil, fmt.Errorf("%w (actor %q, kind %q)", ErrNoSuchActor, f.Actor, f.Kind)
			}
			break
		}
		switch f.Action {
		case FaultStop:
			in.sys.Root.Stop(c.pid)
		default:
			in.sys.Root.Send(c.pid, &injectedFault{action: f.Action, delay: f.Delay})
		}
		in.log.Warn("fault injected", zap.String("action", f.Action), zap.String("actor", c.path),
			zap.String("kind", c.kind), zap.Duration("delay", f.Delay))
		in.emit(Event{Name: EventFaultInjected, Kind: f.Action, Detail: c.path})
		done = append(done, Injected{Action: f.Action, Actor: c.path, Kind: c.kind})
	}
	return done, nil
}

// execute runs on the target actor's goroutine.
func (in *Instruments) execute(c *cell, f *injectedFault) {
	switch f.action {
	case FaultKill:
		panic(FaultPanic{Actor: c.path})
	case FaultDelay:
		time.Sleep(f.delay)
	}
}
