package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// tracedMsg is a user message stamped by the mailbox wrapper while tracing
// is on for its actor; the instrument middleware (outermost in the chain)
// unwraps it before anything else sees the message.
type tracedMsg struct {
	msg any
	at  time.Time
}

// instrumentedMailbox wraps protoactor's unbounded mailbox: it gives the
// instruments the mailbox depth and stamps enqueue times for tracing. With
// tracing off a post costs one extra atomic load.
type instrumentedMailbox struct {
	actor.Mailbox
	c *cell
}

func (m *instrumentedMailbox) PostUserMessage(msg any) {
	if m.c.trace.Load() {
		if _, batch := msg.(actor.MessageBatch); !batch {
			msg = &tracedMsg{msg: msg, at: time.Now()}
		}
	}
	m.Mailbox.PostUserMessage(msg)
}

// instrumentMiddleware is the receiver middleware every Props actor gets,
// outermost: it registers the actor at Started, counts restarts, drops it
// at Stopped, executes injected faults (which never reach the actor) and,
// when tracing is on for the actor, records the message.
func instrumentMiddleware(c *cell) actor.ReceiverMiddleware {
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(ctx actor.ReceiverContext, env *actor.MessageEnvelope) {
			var enqueued time.Time
			switch m := env.Message.(type) {
			case *tracedMsg:
				enqueued = m.at
				if inner, ok := m.msg.(*actor.MessageEnvelope); ok {
					env = inner
				} else {
					env = &actor.MessageEnvelope{Header: env.Header, Message: m.msg, Sender: env.Sender}
				}
			case *injectedFault:
				if c.in != nil {
					c.in.execute(c, m)
				}
				return
			case *actor.Started:
				if c.in == nil {
					c.in = InstrumentsOf(ctx.ActorSystem())
					c.pid = ctx.Self()
					c.path = c.pid.GetId()
					c.kind = KindOf(c.path)
					if c.in != nil {
						c.in.register(c)
					}
				}
			case *actor.Restarting:
				if c.in != nil {
					c.in.restarted(c)
				}
			case *actor.Stopped:
				next(ctx, env)
				if c.in != nil {
					c.in.unregister(c)
				}
				return
			}
			c.received.Add(1)
			if !c.trace.Load() || c.in == nil {
				next(ctx, env)
				return
			}
			start := time.Now()
			next(ctx, env)
			c.in.tracing.record(c, env, enqueued, start, time.Now())
		}
	}
}
