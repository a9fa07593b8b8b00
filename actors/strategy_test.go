package actors

import (
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
)

type crash struct{}

// crashy counts its incarnations (Started) and panics on crash.
type crashy struct{ starts chan<- time.Time }

func (c *crashy) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		c.starts <- time.Now()
	case crash:
		panic("boom")
	}
}

// harness spawns a parent supervising one crashy child with s.
func harness(t *testing.T, s *BackoffStrategy) (sys *actor.ActorSystem, child *actor.PID, starts chan time.Time) {
	t.Helper()
	sys = NewSystem(zap.NewNop())
	starts = make(chan time.Time, 64)
	childCh := make(chan *actor.PID, 1)
	parent := sys.Root.Spawn(Props(nil, func() actor.Actor {
		return actor.ReceiveFunc(func(ctx actor.Context) {
			if _, ok := ctx.Message().(*actor.Started); ok {
				pid, err := ctx.SpawnNamed(Props(nil, func() actor.Actor { return &crashy{starts: starts} }), "child")
				if err != nil {
					t.Error(err)
				}
				childCh <- pid
			}
		})
	}, actor.WithSupervisor(s)))
	t.Cleanup(func() {
		_ = sys.Root.StopFuture(parent).Wait()
		sys.Shutdown()
	})
	child = <-childCh
	waitStart(t, starts)
	return sys, child, starts
}

func waitStart(t *testing.T, starts <-chan time.Time) time.Time {
	t.Helper()
	select {
	case ts := <-starts:
		return ts
	case <-time.After(5 * time.Second):
		t.Fatal("actor did not (re)start")
	}
	return time.Time{}
}

func TestBackoffDelayGrowsAndCaps(t *testing.T) {
	s := &BackoffStrategy{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond}
	want := []time.Duration{10, 20, 40, 50, 50}
	for i, w := range want {
		if got := s.Delay(i + 1); got != w*time.Millisecond {
			t.Errorf("Delay(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	for i := 0; i < 1000; i++ {
		if j := jitter(40 * time.Millisecond); j < 20*time.Millisecond || j > 40*time.Millisecond {
			t.Fatalf("jitter(40ms) = %v, outside [20ms, 40ms]", j)
		}
	}
}

func TestBackoffRestartsWithGrowingDelaysThenGivesUp(t *testing.T) {
	var mu sync.Mutex
	var delays []time.Duration
	gaveUp := make(chan any, 1)
	s := &BackoffStrategy{
		Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, MaxRetries: 3, Window: time.Minute,
		OnRestart: func(_ *actor.PID, _ any, d time.Duration) {
			mu.Lock()
			delays = append(delays, d)
			mu.Unlock()
		},
		OnGiveUp: func(_ *actor.PID, reason any) { gaveUp <- reason },
	}
	sys, child, starts := harness(t, s)
	for i := 1; i <= 3; i++ {
		crashedAt := time.Now()
		sys.Root.Send(child, crash{})
		restarted := waitStart(t, starts)
		// Restart must not come before the jittered lower bound Delay(i)/2.
		if el := restarted.Sub(crashedAt); el < s.Delay(i)/2 {
			t.Errorf("restart %d after %v, want >= %v", i, el, s.Delay(i)/2)
		}
	}
	mu.Lock()
	if len(delays) != 3 {
		t.Fatalf("scheduled %d restarts, want 3", len(delays))
	}
	for i, d := range delays {
		if lo, hi := s.Delay(i+1)/2, s.Delay(i+1); d < lo || d > hi {
			t.Errorf("delay %d = %v, want in [%v, %v]", i+1, d, lo, hi)
		}
	}
	mu.Unlock()
	// 4th failure in the window: stopped, OnGiveUp called, no restart.
	sys.Root.Send(child, crash{})
	select {
	case r := <-gaveUp:
		if r != "boom" {
			t.Errorf("give-up reason %v, want boom", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("strategy never gave up")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := sys.ProcessRegistry.GetLocal(child.Id); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("child still registered after give-up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-starts:
		t.Fatal("child restarted after give-up")
	default:
	}
}

func TestBackoffStaysAliveWhenFailuresAreSpreadOut(t *testing.T) {
	gaveUp := make(chan any, 1)
	s := &BackoffStrategy{
		Initial: time.Millisecond, Max: 2 * time.Millisecond, MaxRetries: 1, Window: 30 * time.Millisecond,
		OnGiveUp: func(_ *actor.PID, reason any) { gaveUp <- reason },
	}
	sys, child, starts := harness(t, s)
	for i := 0; i < 4; i++ {
		last := time.Now()
		sys.Root.Send(child, crash{})
		waitStart(t, starts)
		// Let the previous failure leave the window before the next one.
		time.Sleep(time.Until(last.Add(40 * time.Millisecond)))
	}
	select {
	case <-gaveUp:
		t.Fatal("gave up although no two failures shared a window")
	default:
	}
}

// TestBackoffNeverGiveUpRestartsPastAnyBudget: with MaxRetries < 0 a child
// failing far more often than the default budget (5 in the window) is
// restarted every time, with delays capped at Max.
func TestBackoffNeverGiveUpRestartsPastAnyBudget(t *testing.T) {
	gaveUp := make(chan any, 1)
	var mu sync.Mutex
	var delays []time.Duration
	s := &BackoffStrategy{
		Initial: time.Millisecond, Max: 4 * time.Millisecond, MaxRetries: NeverGiveUp, Window: time.Minute,
		OnGiveUp: func(_ *actor.PID, reason any) { gaveUp <- reason },
		OnRestart: func(_ *actor.PID, _ any, d time.Duration) {
			mu.Lock()
			delays = append(delays, d)
			mu.Unlock()
		},
	}
	sys, child, starts := harness(t, s)
	const failures = 12
	for i := 0; i < failures; i++ {
		sys.Root.Send(child, crash{})
		waitStart(t, starts)
	}
	select {
	case <-gaveUp:
		t.Fatal("gave up although MaxRetries < 0")
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	if len(delays) != failures {
		t.Fatalf("scheduled %d restarts, want %d", len(delays), failures)
	}
	for i, d := range delays {
		if d > s.Max {
			t.Errorf("delay %d = %v above Max %v", i+1, d, s.Max)
		}
	}
	if last := delays[failures-1]; last < s.Max/2 {
		t.Errorf("delay after %d failures = %v, want the capped [%v, %v]", failures, last, s.Max/2, s.Max)
	}
	if _, ok := sys.ProcessRegistry.GetLocal(child.Id); !ok {
		t.Fatal("child not registered after the restarts")
	}
}
