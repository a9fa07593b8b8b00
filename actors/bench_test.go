package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
)

// counter closes done after n messages.
type counter struct {
	n    int
	done chan struct{}
}

func (c *counter) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*ping); ok {
		c.n--
		if c.n == 0 {
			close(c.done)
		}
	}
}

// benchSend measures one-way sends root → actor, end to end.
func benchSend(b *testing.B, props func(actor.Producer) *actor.Props, trace bool) {
	sys := NewSystem(zap.NewNop())
	done := make(chan struct{})
	pid, err := sys.Root.SpawnNamed(props(func() actor.Actor { return &counter{n: b.N, done: done} }), "replica-manager")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sys.Root.StopFuture(pid).Wait(); sys.Shutdown() }()
	in := InstrumentsOf(sys)
	if trace {
		in.SetTrace(TraceFilter{Enabled: true})
		events, cancel := in.SubscribeTrace(1 << 16)
		defer cancel()
		go func() {
			for range events {
			}
		}()
	}
	m := &ping{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sys.Root.Send(pid, m)
	}
	<-done
}

// BenchmarkSend compares the same actor without any middleware, with only
// the panic logger (what every actor had before the instruments), with
// the instruments and tracing off, and with tracing on:
//
//	go test ./actors -run '^$' -bench Send -benchtime 1000000x -count 5
func BenchmarkSend(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		benchSend(b, func(p actor.Producer) *actor.Props { return actor.PropsFromProducer(p) }, false)
	})
	b.Run("panic-logger", func(b *testing.B) {
		benchSend(b, func(p actor.Producer) *actor.Props {
			return actor.PropsFromProducer(p, actor.WithReceiverMiddleware(PanicLogger(nil)))
		}, false)
	})
	b.Run("instrumented-trace-off", func(b *testing.B) {
		benchSend(b, func(p actor.Producer) *actor.Props { return Props(nil, p) }, false)
	})
	b.Run("instrumented-trace-on", func(b *testing.B) {
		benchSend(b, func(p actor.Producer) *actor.Props { return Props(nil, p) }, true)
	})
}
