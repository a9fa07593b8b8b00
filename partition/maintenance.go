package partition

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/storage"
)

// MaintenanceName is the log-manager actor's name.
const MaintenanceName = "log-manager"

// MaintenanceConfig sets the log-manager actor's periods. A zero period
// takes its default; a negative one never runs (its checkpoint is still
// written at stop).
type MaintenanceConfig struct {
	// RetentionCheck: log.retention.check.interval.ms (default 300000).
	RetentionCheck time.Duration
	// FlushCheck: log.flush.scheduler.interval.ms (Kafka default MaxLong;
	// here default 1s, when server.properties leaves it out — the pass is
	// cheap when nothing is due, and it makes flush.ms take effect).
	FlushCheck time.Duration
	// Checkpoint: replica.high.watermark.checkpoint.interval.ms (default
	// 5000), replication-offset-checkpoint.
	Checkpoint time.Duration
	// RecoveryPointCheckpoint: log.flush.offset.checkpoint.interval.ms
	// (default 60000), recovery-point-offset-checkpoint.
	RecoveryPointCheckpoint time.Duration
	// LogStartCheckpoint: log.flush.start.offset.checkpoint.interval.ms
	// (default 60000), log-start-offset-checkpoint.
	LogStartCheckpoint time.Duration
	// CleanerBackoff: log.cleaner.backoff.ms (default 15000), the pause
	// between log cleaner passes (cleanup.policy=compact logs).
	CleanerBackoff time.Duration
	// CleanerDisabled: log.cleaner.enable=false (Kafka's default is
	// enabled, hence the negative so a zero config cleans).
	CleanerDisabled bool
	// Cleaner: log.cleaner.dedupe.buffer.size,
	// log.cleaner.io.buffer.load.factor, log.cleaner.threads,
	// log.cleaner.io.buffer.size and log.cleaner.io.max.bytes.per.second;
	// a zero DedupeBufferSize takes Kafka's defaults for all. Threads 0
	// (log.cleaner.threads=0) runs no cleaner pass, as Kafka starts no
	// cleaner thread.
	Cleaner storage.CleanerConfig
	// AfterRetention runs after a retention pass that deleted segments
	// (nil = nothing), on the actor's goroutine: it must not block. The
	// broker passes Manager.RefreshLogStart, so the partitions publish
	// their new log start offsets.
	AfterRetention func()
	// Backoff is the actor's supervision (its root guardian): zero fields
	// take 100 ms doubling to 10 s, failures older than 60 s forgotten, and
	// MaxRetries 0 means actors.NeverGiveUp — a stopped log-manager would
	// silently end retention, flushes, cleaning and checkpoints. Its
	// OnRestart is replaced by one logging the failure.
	Backoff actors.BackoffStrategy
}

func (c *MaintenanceConfig) defaults() {
	if c.RetentionCheck <= 0 {
		c.RetentionCheck = 300 * time.Second
	}
	if c.FlushCheck == 0 {
		c.FlushCheck = time.Second
	}
	if c.Checkpoint == 0 {
		c.Checkpoint = 5 * time.Second
	}
	if c.RecoveryPointCheckpoint == 0 {
		c.RecoveryPointCheckpoint = time.Minute
	}
	if c.LogStartCheckpoint == 0 {
		c.LogStartCheckpoint = time.Minute
	}
	if c.CleanerBackoff <= 0 {
		c.CleanerBackoff = 15 * time.Second
	}
	if c.Cleaner.DedupeBufferSize <= 0 {
		c.Cleaner = storage.DefaultCleanerConfig()
	}
	// Initial, Max and Window default in BackoffStrategy itself (100 ms,
	// 10 s, 1 min); only the give-up rule differs: never.
	if c.Backoff.MaxRetries == 0 {
		c.Backoff.MaxRetries = actors.NeverGiveUp
	}
}

// maintTick is a timer's tick for one pass. from is the actor instance
// whose timer sent it: ticks queued while the actor was failing (its
// mailbox is suspended during the restart backoff) reach the new instance,
// which has armed its own timers and drops them — else every restart would
// add a timer chain per pass.
type maintTick struct {
	kind int
	from *maintenanceActor
}

const (
	tickRetention = iota
	tickFlush
	tickCheckpoint // high watermarks
	tickClean
	tickRecoveryPoints
	tickLogStarts
	numTicks
)

// maintenanceActor runs the LogStore's periodic passes. Timers are
// time.AfterFunc re-armed after each pass (no goroutine of our own, no
// overlapping passes) and stopped in Stopping, after a final checkpoint.
type maintenanceActor struct {
	store LogStore
	hw    func() map[TopicPartition]int64
	// shared is the config in force, kept by Maintenance across restarts
	// (SetCleaner changes it at run time); cfg is this instance's copy,
	// refreshed from it at start and on maintReconfigured.
	shared *atomic.Pointer[MaintenanceConfig]
	cfg    MaintenanceConfig
	log    *zap.Logger
	timers [numTicks]*time.Timer
	// cleaning: a cleaner pass runs on its own goroutine (it may take
	// minutes, throttled by log.cleaner.io.max.bytes.per.second, and must
	// not hold up retention, flushes and checkpoints); passes counts them,
	// shared across restarts so Stopping waits for one an earlier
	// instance started.
	cleaning bool
	passes   *sync.WaitGroup
}

// cleanDone: the cleaner pass started by from ended; the cleaner's
// timer is armed for the next one.
type cleanDone struct{ from *maintenanceActor }

// maintReconfigured: the shared config changed (SetCleaner); the cleaner's
// timer is re-armed on the new backoff.
type maintReconfigured struct{}

func (a *maintenanceActor) period(kind int) time.Duration {
	switch kind {
	case tickRetention:
		return a.cfg.RetentionCheck
	case tickFlush:
		return a.cfg.FlushCheck
	case tickClean:
		return a.cfg.CleanerBackoff
	case tickRecoveryPoints:
		return a.cfg.RecoveryPointCheckpoint
	case tickLogStarts:
		return a.cfg.LogStartCheckpoint
	}
	return a.cfg.Checkpoint
}

// arm starts kind's timer, unless its period is negative (never).
func (a *maintenanceActor) arm(ctx actor.Context, kind int) {
	if a.period(kind) < 0 {
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.timers[kind] = time.AfterFunc(a.period(kind), func() { root.Send(self, &maintTick{kind: kind, from: a}) })
}

func (a *maintenanceActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.cfg = *a.shared.Load()
		for k := range a.timers {
			a.arm(ctx, k)
		}
	case maintReconfigured:
		a.cfg = *a.shared.Load()
		if t := a.timers[tickClean]; t != nil {
			t.Stop()
		}
		if !a.cleaning {
			a.arm(ctx, tickClean)
		}
	case *maintTick:
		if m.from != a {
			return
		}
		if m.kind == tickClean {
			if !a.startCleaning(ctx) {
				a.arm(ctx, tickClean)
			}
			return
		}
		a.run(m.kind)
		a.arm(ctx, m.kind)
	case cleanDone:
		if m.from != a {
			return
		}
		a.cleaning = false
		a.arm(ctx, tickClean)
	case *actor.Restarting:
		a.stopTimers()
	case *actor.Stopping:
		a.stopTimers()
		// End a throttled pass at its next I/O rather than wait it out.
		if s, ok := a.store.(StorageStore); ok {
			s.M.AbortCleaning()
		}
		a.passes.Wait()
		a.run(tickCheckpoint)
		a.run(tickRecoveryPoints)
		a.run(tickLogStarts)
	}
}

// startCleaning starts a cleaner pass on its own goroutine (an effect:
// its end comes back as cleanDone), unless the cleaner is disabled
// (log.cleaner.enable=false, log.cleaner.threads=0) or the store has no
// storage engine (test fakes have nothing to compact). It reports whether
// it started one.
func (a *maintenanceActor) startCleaning(ctx actor.Context) bool {
	s, ok := a.store.(StorageStore)
	if !ok || a.cfg.CleanerDisabled || a.cfg.Cleaner.Threads == 0 {
		return false
	}
	a.cleaning = true
	cc, log := a.cfg.Cleaner, a.log
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.passes.Add(1)
	go func() {
		defer a.passes.Done()
		if _, err := s.M.CleanerPass(time.Now(), cc); err != nil {
			log.Warn("log cleaner pass", zap.Error(err))
		}
		root.Send(self, cleanDone{from: a})
	}()
	return true
}

func (a *maintenanceActor) stopTimers() {
	for _, t := range a.timers {
		if t != nil {
			t.Stop()
		}
	}
}

func (a *maintenanceActor) run(kind int) {
	now := time.Now()
	switch kind {
	case tickRetention:
		n, err := a.store.RetentionPass(now)
		if err != nil {
			a.log.Warn("retention pass", zap.Error(err))
		}
		if n > 0 {
			a.log.Info("retention deleted segments", zap.Int("segments", n))
			if a.cfg.AfterRetention != nil {
				a.cfg.AfterRetention()
			}
		}
	case tickFlush:
		if err := a.store.FlushPass(now); err != nil {
			a.log.Warn("flush pass", zap.Error(err))
		}
	case tickCheckpoint:
		if a.hw != nil {
			if err := a.store.CheckpointHighWatermarks(a.hw()); err != nil {
				a.log.Warn("high watermark checkpoint", zap.Error(err))
			}
		}
	case tickRecoveryPoints:
		if err := a.store.CheckpointRecoveryPoints(); err != nil {
			a.log.Warn("recovery point checkpoint", zap.Error(err))
		}
	case tickLogStarts:
		if err := a.store.CheckpointLogStartOffsets(); err != nil {
			a.log.Warn("log start offset checkpoint", zap.Error(err))
		}
	}
}

// Maintenance is the running log-manager actor.
type Maintenance struct {
	sys    *actor.ActorSystem
	pid    *actor.PID
	store  LogStore
	cfg    atomic.Pointer[MaintenanceConfig] // in force; read by every actor instance
	passes sync.WaitGroup                    // cleaner pass goroutines
}

// StartMaintenance spawns the log-manager actor: retention, flush, the
// log cleaner (every CleanerBackoff, unless disabled) and the three
// checkpoints (high watermarks from hw, typically Manager.HighWatermarks;
// recovery points; log start offsets) each on its period, and final
// checkpoints when stopped. A panic restarts
// it under cfg.Backoff (actors.BackoffStrategy as its root guardian; by
// default 100 ms doubling to 10 s, never giving up) and its timers are
// re-armed on restart.
func StartMaintenance(sys *actor.ActorSystem, store LogStore, hw func() map[TopicPartition]int64, cfg MaintenanceConfig, log *zap.Logger) (*Maintenance, error) {
	cfg.defaults()
	if log == nil {
		log = zap.NewNop()
	}
	supervision := cfg.Backoff
	supervision.OnRestart = func(_ *actor.PID, reason any, delay time.Duration) {
		log.Error("log-manager actor failed, restarting", zap.Any("reason", reason), zap.Duration("delay", delay))
	}
	m := &Maintenance{sys: sys, store: store}
	m.cfg.Store(&cfg)
	if s, ok := store.(StorageStore); ok {
		s.M.SetCleanerIORate(cfg.Cleaner.MaxIOBytesPerSecond)
	}
	props := actors.Props(log, func() actor.Actor {
		return &maintenanceActor{store: store, hw: hw, shared: &m.cfg, log: log, passes: &m.passes}
	}, actor.WithGuardian(&supervision))
	pid, err := sys.Root.SpawnNamed(props, MaintenanceName)
	if err != nil {
		return nil, err
	}
	m.pid = pid
	return m, nil
}

// SetCleaner changes the log cleaner's settings at run time
// (log.cleaner.backoff.ms, log.cleaner.dedupe.buffer.size,
// log.cleaner.io.buffer.load.factor, log.cleaner.threads,
// log.cleaner.io.buffer.size, log.cleaner.io.max.bytes.per.second as
// dynamic broker configs, Kafka's LogCleaner.reconfigure): the I/O rate
// bounds the running pass at once (Kafka updates its Throttler), the rest
// applies from the next pass, and the pause before it is the new backoff
// (from now, or from the end of the running pass). A zero
// DedupeBufferSize keeps Kafka's defaults.
func (m *Maintenance) SetCleaner(backoff time.Duration, c storage.CleanerConfig) {
	next := *m.cfg.Load()
	next.CleanerBackoff, next.Cleaner = backoff, c
	next.defaults()
	m.cfg.Store(&next)
	if s, ok := m.store.(StorageStore); ok {
		s.M.SetCleanerIORate(next.Cleaner.MaxIOBytesPerSecond)
	}
	m.sys.Root.Send(m.pid, maintReconfigured{})
}

// Stop stops the actor after its final checkpoint and waits for it. Stop
// the replica manager first so the checkpointed high watermarks are final.
func (m *Maintenance) Stop() { _ = m.sys.Root.StopFuture(m.pid).Wait() }
