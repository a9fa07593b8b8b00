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

// Props builds a fresh *actor.Props for one spawn: the producer, the panic
// logger and any extra options (supervisor, mailbox…). Always build Props
// per spawn through this helper: protoactor's Configure appends to a shared
// *Props, so reusing one value with middleware-spreading options makes
// middleware chains grow with every spawn (ARCHITECTURE-NOTES §1.6).
func Props(log *zap.Logger, producer actor.Producer, opts ...actor.PropsOption) *actor.Props {
	all := make([]actor.PropsOption, 0, len(opts)+1)
	all = append(all, actor.WithReceiverMiddleware(PanicLogger(log)))
	all = append(all, opts...)
	return actor.PropsFromProducer(producer, all...)
}
