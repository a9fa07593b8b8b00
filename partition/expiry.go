package partition

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
)

// Kafka's defaults for producer.id.expiration.ms and
// producer.id.expiration.check.interval.ms.
const (
	defaultProducerIDExpiration      = 24 * time.Hour
	defaultProducerIDExpirationCheck = 10 * time.Minute
)

// expirySettings is how the partition actors expire idle producer ids.
type expirySettings struct {
	after time.Duration // <= 0: never
	every time.Duration
}

// producerExpiry applies ManagerConfig's defaults (0 = Kafka's).
func producerExpiry(after, every time.Duration) expirySettings {
	if after == 0 {
		after = defaultProducerIDExpiration
	}
	if every <= 0 {
		every = defaultProducerIDExpirationCheck
	}
	return expirySettings{after: after, every: every}
}

// expireCheck is the periodic producer-id expiry tick; as for isrCheck,
// only the one the actor armed last counts.
type expireCheck struct{ armed time.Time }

// armExpiry schedules the next producer-id expiry check.
func (a *partitionActor) armExpiry(ctx actor.Context) {
	if a.expiry.after <= 0 || a.expiryTimer != nil {
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	m := &expireCheck{armed: time.Now()}
	a.expiryArmed = m
	a.expiryTimer = time.AfterFunc(a.expiry.every, func() { root.Send(self, m) })
}

func (a *partitionActor) stopExpiry() {
	if a.expiryTimer != nil {
		a.expiryTimer.Stop()
		a.expiryTimer, a.expiryArmed = nil, nil
	}
}

// expireProducers runs one check (on the actor, which owns the state).
func (a *partitionActor) expireProducers(ctx actor.Context, m *expireCheck) {
	if m != a.expiryArmed {
		return // stale: armed by a previous incarnation or a stopped timer
	}
	a.expiryTimer, a.expiryArmed = nil, nil
	if a.core != nil {
		if n := a.core.prod.Expire(time.Now().UnixMilli(), a.expiry.after); n > 0 {
			a.log.Info("expired idle producer ids", zap.Stringer("partition", a.h.tp), zap.Int("producers", n),
				zap.Duration("producer.id.expiration.ms", a.expiry.after))
		}
	}
	a.armExpiry(ctx)
}
