package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
)

// PanicLogger returns a receiver middleware that logs a panic raised while
// an actor handles a message — actor id, message type, panic value and the
// goroutine stack (protoactor itself logs only the value) — and then
// re-panics so the supervisor still sees the failure.
func PanicLogger(log *zap.Logger) actor.ReceiverMiddleware {
	if log == nil {
		log = zap.NewNop()
	}
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			defer func() {
				if r := recover(); r != nil {
					log.Error("actor panic",
						zap.String("actor", c.Self().GetId()),
						zap.String("message", fmt.Sprintf("%T", env.Message)),
						zap.Any("reason", r),
						zap.Stack("stack"))
					panic(r)
				}
			}()
			next(c, env)
		}
	}
}

// Props builds a fresh *actor.Props for one spawn: the producer, the
// instrument middleware (live tree, restart counts, fault injection,
// tracing — outermost), the panic logger and any extra options
// (supervisor…). Its mailbox is protoactor's unbounded one wrapped so the
// instruments see its depth; an actor that must not have it can pass
// actor.WithMailbox in opts (then its depth reads -1 and tracing sees no
// queue time). Always build Props per spawn through this helper:
// protoactor's Configure appends to a shared *Props, so reusing one value
// makes middleware chains grow with every spawn (protoactor-go's
// Props.Configure appends to the receiver's middleware slice), and the
// instruments keep one record per Props.
func Props(log *zap.Logger, producer actor.Producer, opts ...actor.PropsOption) *actor.Props {
	c := &cell{}
	unbounded := actor.Unbounded()
	all := make([]actor.PropsOption, 0, len(opts)+2)
	all = append(all,
		actor.WithMailbox(func() actor.Mailbox {
			mb := &instrumentedMailbox{Mailbox: unbounded(), c: c}
			c.mb = mb
			return mb
		}),
		actor.WithReceiverMiddleware(instrumentMiddleware(c), PanicLogger(log)))
	all = append(all, opts...)
	return actor.PropsFromProducer(producer, all...)
}
