// Package actors is Gregor's runtime glue around protoactor-go: the actor
// system constructor (logging routed into zap), the supervisor strategy
// used for partitions and other long-lived actors, the panic-logging
// receiver middleware and the one Props helper every spawn goes through.
// It holds no Kafka logic.
package actors

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
)

// NewSystem creates an actor system whose internal logger (protoactor's
// slog logger: "[ACTOR] Recovering", supervision and dead-letter lines)
// writes through log instead of protoactor's default coloured stderr
// handler. A nil log discards those lines. Dead letters are throttled to 3
// lines per second (protoactor's defaults) and metrics stay off (the
// default Prometheus provider would bind :2222 on all interfaces).
//
// The system carries its Instruments (InstrumentsOf): the live actor
// tree, fault injection and tracing of every actor spawned through Props.
//
// ActorSystem.Shutdown does not stop actors: owners must stop what they
// spawned (StopFuture/PoisonFuture) before shutting the system down.
func NewSystem(log *zap.Logger) *actor.ActorSystem {
	factory := func(s *actor.ActorSystem) *slog.Logger {
		if log == nil {
			return slog.New(slog.DiscardHandler)
		}
		return slog.New(zapslog.NewHandler(log.Core(), zapslog.WithName("protoactor"))).With("system", s.ID)
	}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(factory))
	attachInstruments(sys, log)
	return sys
}
