package config

import (
	"fmt"
	"sort"

	"go.uber.org/zap"
)

// notKafka3 marks an ignoredKeys entry that Kafka 3.9 itself does not know
// (removed before it): its warning is Kafka's own AbstractConfig.logUnused
// text (Kafka 2.x–3.4), not a Gregor reason.
const notKafka3 = "not a Kafka 3.9 broker config"

// Shared reasons of the table below.
const (
	whyNotYet     = "not applied yet"
	whyKRaftOnly  = "a KRaft-mode key: Kafka 3.9 in ZooKeeper mode ignores it too"
	whyJavaPlugin = "a Java class, which Gregor cannot load; Gregor's metrics are Prometheus on admin.listener"
	whyPurgatory  = "tunes Kafka's purgatory; Gregor keeps delayed produce/fetch requests with their partition and drops each one when it completes or expires"
	whyNoBrokerID = "Gregor does not generate broker ids: an unset broker.id is 0"
	whyLoadBuffer = "the coordinator loads its partition one record batch at a time, not through a read buffer of this size"
)

// ignoredKeys are Kafka broker keys Gregor accepts without acting on them,
// each with the reason it has no effect here. Parse logs each one present
// in server.properties once at WARN with its reason (Kafka's own
// "supplied but isn't a known config" for the notKafka3 ones), so real
// server.properties files (the seed articles' among them) load, and their
// owner is told what is not applied. Broker.IgnoredKeys lists them;
// config/README.md's table is checked against this map by
// TestIgnoredKeysREADME.
//
// A file that implements a key removes it with delete(ignoredKeys, k) in
// its init (quotas.go's pattern), so this table is not edited by every change.
var ignoredKeys = map[string]string{
	// Thread pools and queues that have no counterpart in a goroutine-per-connection server.
	"background.threads":                     "Gregor has no background thread pool: periodic work (retention, flush, checkpoints) runs on actor timers",
	"num.replica.alter.log.dirs.threads":     whyNotYet,
	"log.cleaner.threads":                    "the log cleaner is one task of the log manager; there is no pool of cleaner threads to size",
	"queued.max.request.bytes":               "there is no request queue bounded in bytes: each connection bounds its requests in flight (num.io.threads)",
	"connections.max.idle.ms":                "idle client connections are not closed",
	"socket.listen.backlog.size":             "listeners use the operating system's backlog (net.core.somaxconn)",
	"socket.connection.setup.timeout.ms":     "inter-broker connections are dialled with built-in timeouts",
	"socket.connection.setup.timeout.max.ms": "inter-broker connections are dialled with built-in timeouts",

	// Broker identity, versions and the ZooKeeper client.
	"broker.id.generation.enable":      whyNoBrokerID,
	"reserved.broker.max.id":           whyNoBrokerID,
	"inter.broker.protocol.version":    "Gregor serves one inter-broker protocol and picks each request's version from ApiVersions",
	"log.message.format.version":       "deprecated since Kafka 3.0, which ignores it too: batches are stored in the format they were produced in",
	"zookeeper.set.acl":                "znodes are created with open (world) ACLs",
	"zookeeper.max.in.flight.requests": "the ZooKeeper client (go-zookeeper) does not bound its requests in flight",
	"zookeeper.clientCnxnSocket":       "the ZooKeeper client (go-zookeeper) has one socket implementation",
	"zookeeper.sync.time.ms":           notKafka3,

	// Controller and leadership.
	"controlled.shutdown.enable":           whyNotYet,
	"controlled.shutdown.max.retries":      whyNotYet,
	"controlled.shutdown.retry.backoff.ms": whyNotYet,
	"controller.socket.timeout.ms":         whyNotYet,

	// Replication tuning. replica.lag.max.messages went with Kafka 0.9
	// (KIP-16: replica.lag.time.max.ms alone decides the ISR);
	// replica.lag.max.message, singular, is a seed article's misspelling.
	"replica.lag.max.messages":                         notKafka3,
	"replica.lag.max.message":                          notKafka3,
	"replica.fetch.max.bytes":                          whyNotYet,
	"replica.fetch.min.bytes":                          whyNotYet,
	"replica.fetch.wait.max.ms":                        whyNotYet,
	"replica.fetch.backoff.ms":                         whyNotYet,
	"replica.fetch.response.max.bytes":                 whyNotYet,
	"replica.socket.timeout.ms":                        whyNotYet,
	"replica.socket.receive.buffer.bytes":              whyNotYet,
	"replica.high.watermark.checkpoint.interval.ms":    whyNotYet,
	"fetch.purgatory.purge.interval.requests":          whyPurgatory,
	"producer.purgatory.purge.interval.requests":       whyPurgatory,
	"delete.records.purgatory.purge.interval.requests": whyPurgatory,

	// Log cleaner I/O tuning.
	"log.cleaner.io.buffer.size":          "the cleaner does not size its read and write buffers by it",
	"log.cleaner.io.max.bytes.per.second": "the cleaner's I/O is not throttled",

	// Log details.
	"log.preallocate":                               whyNotYet,
	"log.roll.jitter.ms":                            whyNotYet,
	"log.roll.jitter.hours":                         whyNotYet,
	"log.flush.offset.checkpoint.interval.ms":       whyNotYet,
	"log.flush.start.offset.checkpoint.interval.ms": whyNotYet,
	"log.dir.failure.timeout.ms":                    whyKRaftOnly,

	// Groups, offsets and transactions tuning.
	"offsets.commit.timeout.ms":                 "an offset commit waits for its __consumer_offsets append without a timeout of its own",
	"offsets.commit.required.acks":              "offset commits are appended with acks=-1 (the default, and deprecated in Kafka 3.x)",
	"offsets.load.buffer.size":                  whyLoadBuffer,
	"transaction.state.log.load.buffer.size":    whyLoadBuffer,
	"offsets.topic.compression.codec":           "offset commits are written uncompressed",
	"group.consumer.session.timeout.ms":         "the KIP-848 consumer group protocol, " + whyKRaftOnly,
	"create.topic.policy.class.name":            "a Java class, which Gregor cannot load: topics are not checked by a policy",
	"alter.config.policy.class.name":            "a Java class, which Gregor cannot load: config changes are not checked by a policy",
	"delegation.token.master.key":               "Gregor has no delegation tokens",
	"connection.failed.authentication.delay.ms": "a failed authentication closes the connection at once",
	"request.timeout.ms":                        "inter-broker requests use built-in timeouts",

	// Metrics.
	"metric.reporters":                    whyJavaPlugin,
	"kafka.metrics.reporters":             whyJavaPlugin,
	"kafka.metrics.polling.interval.secs": "the polling interval of kafka.metrics.reporters, " + whyJavaPlugin,
	"metrics.num.samples":                 "Prometheus counters and histograms are not sampled in windows",
	"metrics.sample.window.ms":            "Prometheus counters and histograms are not sampled in windows",
	"metrics.recording.level":             "every metric is recorded",
}

// IgnoredKey is a server.properties key that Gregor accepted but does not
// act on, with the reason (ignoredKeys).
type IgnoredKey struct {
	Key    string
	Reason string // why it has no effect; notKafka3 for keys Kafka 3.9 does not know
}

// Warning is the line Parse logs for k: Kafka's AbstractConfig.logUnused
// text for a key Kafka 3.9 does not know, else Gregor's with the reason.
func (k IgnoredKey) Warning() string {
	if k.Reason == notKafka3 {
		return fmt.Sprintf("The configuration '%s' was supplied but isn't a known config.", k.Key)
	}
	return fmt.Sprintf("The configuration '%s' was supplied but has no effect in Gregor: %s.", k.Key, k.Reason)
}

// IgnoredKeys are the keys of b's server.properties (Raw) that Gregor
// accepts without acting on them, sorted by key.
func (b *Broker) IgnoredKeys() []IgnoredKey {
	var out []IgnoredKey
	for k := range b.Raw {
		if why, ok := ignoredKeys[k]; ok {
			out = append(out, IgnoredKey{Key: k, Reason: why})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// logIgnoredKeys warns once per ignored key of b. Values are not logged:
// delegation.token.master.key is a secret.
func logIgnoredKeys(b *Broker, log *zap.Logger) {
	for _, k := range b.IgnoredKeys() {
		log.Warn(k.Warning(), zap.String("key", k.Key))
	}
}
