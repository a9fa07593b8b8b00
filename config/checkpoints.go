package config

import (
	"math"
	"time"
)

// Checkpoints are the periods of the log manager's checkpoint and flush
// passes (partition.MaintenanceConfig), in milliseconds as Kafka's keys.
// Read at start, as in Kafka. A period of 0 or less runs no periodic pass
// (Kafka runs such a task once, at start): the file is then written only at
// shutdown and when log dirs change.
type Checkpoints struct {
	// HighWatermarkMs is replica.high.watermark.checkpoint.interval.ms
	// (default 5000): how often replication-offset-checkpoint is written.
	HighWatermarkMs int64
	// RecoveryPointMs is log.flush.offset.checkpoint.interval.ms (default
	// 60000, at least 0): how often recovery-point-offset-checkpoint is
	// written.
	RecoveryPointMs int64
	// LogStartOffsetMs is log.flush.start.offset.checkpoint.interval.ms
	// (default 60000, at least 0): how often log-start-offset-checkpoint
	// is written.
	LogStartOffsetMs int64
	// FlushSchedulerMs is log.flush.scheduler.interval.ms (Kafka's default
	// Long.MaxValue, at least 0): how often logs are checked for a flush
	// due by flush.ms. FlushSchedulerSet is false when server.properties
	// leaves it out: Gregor then checks every second, so flush.ms
	// (log.flush.interval.ms) takes effect, where Kafka's default never
	// runs the check after the first.
	FlushSchedulerMs  int64
	FlushSchedulerSet bool
}

func defaultCheckpoints() Checkpoints {
	return Checkpoints{HighWatermarkMs: 5000, RecoveryPointMs: 60000, LogStartOffsetMs: 60000, FlushSchedulerMs: math.MaxInt64}
}

// Period converts one of the Checkpoints' intervals (ms) to a timer
// period: 0 or less, or longer than a time.Duration holds (~292 years),
// is -1, "never" (partition.MaintenanceConfig's convention).
func Period(ms int64) time.Duration {
	if ms <= 0 || ms > int64(math.MaxInt64/time.Millisecond) {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

// checkpointKeys are added to brokerKeys (keys.go) by init;
// log.flush.scheduler.interval.ms replaces keys.go's validate-only entry.
var checkpointKeys = map[string]brokerKey{
	"replica.high.watermark.checkpoint.interval.ms": intKey(func(b *Broker) *int64 { return &b.Checkpoints.HighWatermarkMs }, 64, noMin),
	"log.flush.offset.checkpoint.interval.ms":       intKey(func(b *Broker) *int64 { return &b.Checkpoints.RecoveryPointMs }, 32, 0),
	"log.flush.start.offset.checkpoint.interval.ms": intKey(func(b *Broker) *int64 { return &b.Checkpoints.LogStartOffsetMs }, 32, 0),
	"log.flush.scheduler.interval.ms":               intKey(func(b *Broker) *int64 { return &b.Checkpoints.FlushSchedulerMs }, 64, 0),
}

func init() {
	for k, v := range checkpointKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
	resolvers = append(resolvers, func(b *Broker) error {
		b.Checkpoints.FlushSchedulerSet = has(b, "log.flush.scheduler.interval.ms")
		return nil
	})
}
