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
}

func init() {
	for k, v := range logKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
	resolvers = append(resolvers, func(b *Broker) error {
		if b.NumReplicaAlterLogDirsThreads <= 0 {
			b.NumReplicaAlterLogDirsThreads = len(b.LogDirs)
		}
		return nil
	})
}
