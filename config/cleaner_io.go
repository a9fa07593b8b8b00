package config

import (
	"fmt"
	"math"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// CleanerIO is the log cleaner's pool and I/O settings (Kafka's
// CleanerConfig). All three are dynamic (LogCleaner.ReconfigurableConfigs):
// partition.Maintenance.SetCleaner applies a change to the next pass.
type CleanerIO struct {
	// Threads is log.cleaner.threads (default 1, at least 0): how many logs
	// one cleaner pass cleans at once. 0 cleans nothing, as Kafka starts no
	// cleaner thread then.
	Threads int
	// BufferSize is log.cleaner.io.buffer.size (default 524288 bytes, at
	// least 0): split as Kafka does, BufferSize/Threads/2 per cleaning for
	// the read buffer of each segment pass and as much for the write side.
	BufferSize int64
	// MaxBytesPerSecond is log.cleaner.io.max.bytes.per.second (default
	// Double.MaxValue, unthrottled): the cleaner's reads plus writes, all
	// cleanings together (Kafka's one cleaner Throttler), in bytes/s.
	MaxBytesPerSecond float64
}

func defaultCleanerIO() CleanerIO {
	return CleanerIO{Threads: 1, BufferSize: 512 << 10, MaxBytesPerSecond: math.MaxFloat64}
}

// cleanerIOKeys are added to brokerKeys by init. Kafka defines
// log.cleaner.io.max.bytes.per.second without a validator; a rate of 0 or
// less would stop (or, in Kafka's Throttler, not bound) the cleaner, so it
// is refused rather than given a meaning of Gregor's own.
var cleanerIOKeys = map[string]brokerKey{
	"log.cleaner.threads":        intKey(func(b *Broker) *int { return &b.CleanerIO.Threads }, 32, 0),
	"log.cleaner.io.buffer.size": intKey(func(b *Broker) *int64 { return &b.CleanerIO.BufferSize }, 32, 0),
	"log.cleaner.io.max.bytes.per.second": {set: func(b *Broker, key, v string) error {
		f, err := parseDouble(key, v, math.Inf(-1), math.Inf(1))
		if err != nil {
			return err
		}
		if f <= 0 {
			return invalid(key, v, "Value must be greater than 0")
		}
		b.CleanerIO.MaxBytesPerSecond = f
		return nil
	}, typ: kmsg.ConfigTypeDouble, def: func(d *Broker) string { return strconv.FormatFloat(d.CleanerIO.MaxBytesPerSecond, 'g', -1, 64) }},
}

// ValidateCleanerThreads is Kafka's LogCleaner.validateReconfiguration: a
// dynamic log.cleaner.threads must be at least 1, at least half the current
// value and at most double it. Errors: *DynamicError with Kafka's message.
func ValidateCleanerThreads(cur, next int) error {
	switch {
	case next < 1:
		return &DynamicError{"Log cleaner threads should be at least 1"}
	case next < cur/2:
		return &DynamicError{fmt.Sprintf("Log cleaner threads cannot be reduced to less than half the current value %d", cur)}
	case next > cur*2:
		return &DynamicError{fmt.Sprintf("Log cleaner threads cannot be increased to more than double the current value %d", cur)}
	}
	return nil
}

func init() {
	for k, v := range cleanerIOKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
		dynamicKeys[k] = true
		delete(notAppliedDynamic, k)
	}
	CleanerKeys = append(CleanerKeys, "log.cleaner.threads", "log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second")
}
