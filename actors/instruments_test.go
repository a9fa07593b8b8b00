package actors

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
)

type ping struct{ corr int32 }

func (p *ping) TraceCorrelationID() int32 { return p.corr }

// tree spawns "replica-manager" (backoff supervisor) with one child
// "orders-3" that counts its starts and the pings it handled.
type tree struct {
	sys    *actor.ActorSystem
	in     *Instruments
	sup    *actor.PID
	child  *actor.PID
	starts chan struct{}
	pings  chan int32
}

func newTree(t *testing.T, s *BackoffStrategy) *tree {
	t.Helper()
	tr := &tree{sys: NewSystem(zap.NewNop()), starts: make(chan struct{}, 64), pings: make(chan int32, 1024)}
	tr.in = InstrumentsOf(tr.sys)
	if tr.in == nil {
		t.Fatal("NewSystem attached no Instruments")
	}
	childCh := make(chan *actor.PID, 1)
	sup, err := tr.sys.Root.SpawnNamed(Props(nil, func() actor.Actor {
		return actor.ReceiveFunc(func(ctx actor.Context) {
			if _, ok := ctx.Message().(*actor.Started); ok {
				pid, err := ctx.SpawnNamed(Props(nil, func() actor.Actor {
					return actor.ReceiveFunc(func(ctx actor.Context) {
						switch m := ctx.Message().(type) {
						case *actor.Started:
							tr.starts <- struct{}{}
						case *ping:
							tr.pings <- m.corr
						}
					})
				}), "orders-3")
				if err != nil {
					t.Error(err)
				}
				childCh <- pid
			}
		})
	}, actor.WithSupervisor(s)), "replica-manager")
	if err != nil {
		t.Fatal(err)
	}
	tr.sup = sup
	t.Cleanup(func() {
		_ = tr.sys.Root.StopFuture(sup).Wait()
		tr.sys.Shutdown()
	})
	tr.child = <-childCh
	tr.waitStart(t)
	return tr
}

func (tr *tree) waitStart(t *testing.T) {
	t.Helper()
	select {
	case <-tr.starts:
	case <-time.After(5 * time.Second):
		t.Fatal("child did not (re)start")
	}
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestKindOf(t *testing.T) {
	for path, want := range map[string]string{
		"replica-manager/orders-3":                 "partition",
		"replica-manager/my-topic-12":              "partition",
		"replica-manager":                          "replica-manager",
		"fetcher-manager/fetcher-2-0":              "fetcher",
		"group-coordinator/group-7-g1":             "group",
		"controller-channel-2-1700000000123456789": "controller-channel",
		"log-manager":                              "log-manager",
		"$42":                                      "anonymous",
	} {
		if got := KindOf(path); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestActorsListsTreeAndCountsKillRestarts(t *testing.T) {
	tr := newTree(t, &BackoffStrategy{Initial: time.Millisecond, Max: 2 * time.Millisecond})
	var mu sync.Mutex
	var events []Event
	tr.in.OnEvent(func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() })

	got := tr.in.Actors()
	if len(got) != 2 || got[0].Path != "replica-manager" || got[1].Path != "replica-manager/orders-3" {
		t.Fatalf("Actors() = %+v, want replica-manager and replica-manager/orders-3", got)
	}
	if got[1].Kind != "partition" || got[1].Restarts != 0 || got[1].Mailbox != 0 {
		t.Errorf("child info %+v, want kind partition, 0 restarts, empty mailbox", got[1])
	}

	inj, err := tr.in.Inject(ActorFault{Action: FaultKill, Actor: "replica-manager/orders-3", Count: 2})
	if err != nil || len(inj) != 2 || inj[0].Kind != "partition" {
		t.Fatalf("Inject = %+v, %v", inj, err)
	}
	tr.waitStart(t)
	tr.waitStart(t)
	poll(t, "2 restarts", func() bool { a, _ := tr.in.Actor("replica-manager/orders-3"); return a.Restarts == 2 })
	if r := tr.in.RestartsByKind()["partition"]; r != 2 {
		t.Errorf("RestartsByKind[partition] = %d, want 2", r)
	}
	// The actor still serves after its restarts.
	tr.sys.Root.Send(tr.child, &ping{corr: 9})
	if c := <-tr.pings; c != 9 {
		t.Errorf("ping after restart carried %d", c)
	}
	mu.Lock()
	var faults, restarts int
	for _, e := range events {
		switch e.Name {
		case EventFaultInjected:
			faults++
			if e.Kind != FaultKill || e.Detail != "replica-manager/orders-3" {
				t.Errorf("fault event %+v", e)
			}
		case EventActorRestart:
			restarts++
		}
	}
	mu.Unlock()
	if faults != 2 || restarts != 2 {
		t.Errorf("events: %d fault_injected, %d actor_restart; want 2 and 2", faults, restarts)
	}

	if _, err := tr.in.Inject(ActorFault{Action: FaultKill, Actor: "nope"}); !errors.Is(err, ErrNoSuchActor) {
		t.Errorf("kill of unknown actor: %v, want ErrNoSuchActor", err)
	}
	if _, err := tr.in.Inject(ActorFault{Action: "explode", Random: true}); err == nil {
		t.Error("unknown action accepted")
	}
	if _, err := tr.in.Inject(ActorFault{Action: FaultDelay, Kind: "partition"}); err == nil {
		t.Error("delay without duration accepted")
	}
}

func TestDelayBacksUpMailboxAndStopRemoves(t *testing.T) {
	tr := newTree(t, &BackoffStrategy{})
	if _, err := tr.in.Inject(ActorFault{Action: FaultDelay, Kind: "partition", Delay: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		tr.sys.Root.Send(tr.child, &ping{corr: int32(i)})
	}
	// While the actor sleeps the pings wait in its mailbox.
	poll(t, "mailbox depth 5", func() bool {
		depth, count := tr.in.MailboxByKind()
		a, _ := tr.in.Actor("replica-manager/orders-3")
		return a.Mailbox == 5 && depth["partition"] == 5 && count["partition"] == 1
	})
	for i := 0; i < 5; i++ {
		<-tr.pings
	}
	if _, err := tr.in.Inject(ActorFault{Action: FaultStop, Actor: "replica-manager/orders-3"}); err != nil {
		t.Fatal(err)
	}
	poll(t, "stopped actor gone from the tree", func() bool { _, ok := tr.in.Actor("replica-manager/orders-3"); return !ok })
	if r := tr.in.RestartsByKind()["partition"]; r != 0 {
		t.Errorf("stop counted %d restarts", r)
	}
}

func TestTraceRecordsMatchingActorsOnly(t *testing.T) {
	tr := newTree(t, &BackoffStrategy{})
	events, cancel := tr.in.SubscribeTrace(16)
	defer cancel()

	tr.in.SetTrace(TraceFilter{Enabled: true, Kinds: []string{"partition"}, Topic: "payments"})
	if a, _ := tr.in.Actor("replica-manager/orders-3"); a.Traced {
		t.Fatal("orders-3 traced under a payments filter")
	}
	tr.in.SetTrace(TraceFilter{Enabled: true, Kinds: []string{"partition"}, Topic: "orders"})
	tr.sys.Root.Send(tr.child, &ping{corr: 77})
	<-tr.pings
	select {
	case e := <-events:
		if e.Actor != "replica-manager/orders-3" || e.Kind != "partition" || e.Message != "*actors.ping" ||
			e.CorrelationID != 77 || e.QueueMicros < 0 || e.HandleMicros < 0 {
			t.Errorf("trace event %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no trace event")
	}
	// Supervisor messages are not traced (kind replica-manager).
	tr.in.PublishRequest(TraceEvent{Message: "Produce received", Topics: []string{"other"}})
	tr.in.PublishRequest(TraceEvent{Message: "Produce received", CorrelationID: 77, Topics: []string{"orders"}})
	if e := <-events; e.Kind != "request" || e.CorrelationID != 77 {
		t.Errorf("request event %+v, want the orders one", e)
	}
	tr.in.SetTrace(TraceFilter{})
	tr.sys.Root.Send(tr.child, &ping{corr: 1})
	<-tr.pings
	select {
	case e := <-events:
		t.Errorf("event with tracing off: %+v", e)
	case <-time.After(20 * time.Millisecond):
	}
}
