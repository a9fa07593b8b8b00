package config

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// logKeys are log manager keys added to brokerKeys (keys.go) by init.
var logKeys = map[string]brokerKey{
	// num.replica.alter.log.dirs.threads: INT, default null = the number
	// of log.dirs (Kafka's KafkaConfig). Kafka has no validator, but 0
	// or less fails its first move (a fetcher id modulo 0), so Gregor
	// refuses it at load.
	"num.replica.alter.log.dirs.threads": nullKey(intSetter(func(b *Broker) *int { return &b.NumReplicaAlterLogDirsThreads }, 32, 1), kmsg.ConfigTypeInt),

	// log.roll.jitter.ms (LONG, null) > log.roll.jitter.hours (INT,
	// default 0, at least 0): the topic default of segment.jitter.ms.
	// resolveRollJitter combines them and applies Kafka's
	// KafkaConfig.validateValues rule on the result.
	"log.roll.jitter.ms":    nullKey(validateInt(64, noMin), kmsg.ConfigTypeLong),
	"log.roll.jitter.hours": checkKey(validateInt(32, 0), kmsg.ConfigTypeInt, "0"),

	// KIP-937 (Kafka 3.6+): LONG, default Long.MaxValue (= take the
	// deprecated log.message.timestamp.difference.max.ms), at least 0.
	"log.message.timestamp.before.max.ms": intKey(func(b *Broker) *int64 { return &b.LogMessageTimestampBeforeMaxMs }, 64, 0),
	"log.message.timestamp.after.max.ms":  intKey(func(b *Broker) *int64 { return &b.LogMessageTimestampAfterMaxMs }, 64, 0),

	// log.preallocate (BOOLEAN, default false): only false (vNoPreallocate).
	"log.preallocate": checkKey(func(_ *Broker, key, v string) error { return vNoPreallocate(key, v) }, kmsg.ConfigTypeBoolean, "false"),
}

// resolveRollJitter sets LogRollJitterMs: log.roll.jitter.ms when set, else
// log.roll.jitter.hours in ms (Kafka's precedence).
func resolveRollJitter(b *Broker) error {
	switch {
	case has(b, "log.roll.jitter.ms"):
		n, _ := parseInt("log.roll.jitter.ms", b.Raw["log.roll.jitter.ms"], 64, noMin)
		if n < 0 {
			return invalid("log.roll.jitter.ms", b.Raw["log.roll.jitter.ms"], "log.roll.jitter.ms must be greater than or equal to 0")
		}
		b.LogRollJitterMs = n
	case has(b, "log.roll.jitter.hours"):
		n, _ := parseInt("log.roll.jitter.hours", b.Raw["log.roll.jitter.hours"], 32, 0)
		b.LogRollJitterMs = n * hourMs
	}
	return nil
}

func init() {
	for k, v := range logKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
	// Topic defaults Kafka changes at run time (DynamicLogConfig): re-applied
	// to hosted topics like the others of TopicDefaultKeys.
	for _, k := range []string{"log.roll.jitter.ms", "log.message.timestamp.before.max.ms", "log.message.timestamp.after.max.ms"} {
		dynamicKeys[k] = true
		TopicDefaultKeys = append(TopicDefaultKeys, k)
	}
	brokerSynonyms["log.roll.jitter.ms"] = []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	brokerSynonyms["log.roll.jitter.hours"] = []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	resolvers = append(resolvers, resolveRollJitter, func(b *Broker) error {
		if b.NumReplicaAlterLogDirsThreads <= 0 {
			b.NumReplicaAlterLogDirsThreads = len(b.LogDirs)
		}
		return nil
	})
}
