package config

import (
	"math"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// setter validates one key's value and stores it in b. Keys whose effect
// depends on other keys (listeners vs port/host.name, log.retention.ms vs
// .minutes vs .hours, log.dirs vs log.dir…) only validate here; resolve
// combines them once every key has been read.
type setter func(b *Broker, key, v string) error

func intSetter[T ~int | ~int16 | ~int32 | ~int64](field func(*Broker) *T, bits int, min int64) setter {
	return func(b *Broker, key, v string) error {
		n, err := parseInt(key, v, bits, min)
		if err != nil {
			return err
		}
		*field(b) = T(n)
		return nil
	}
}

func msSetter(field func(*Broker) *time.Duration, bits int, min int64) setter {
	return func(b *Broker, key, v string) error {
		n, err := parseInt(key, v, bits, min)
		if err != nil {
			return err
		}
		*field(b) = ms(n)
		return nil
	}
}

func boolSetter(field func(*Broker) *bool) setter {
	return func(b *Broker, key, v string) error {
		x, err := parseBool(key, v)
		if err != nil {
			return err
		}
		*field(b) = x
		return nil
	}
}

func doubleSetter(field func(*Broker) *float64, min, max float64) setter {
	return func(b *Broker, key, v string) error {
		f, err := parseDouble(key, v, min, max)
		if err != nil {
			return err
		}
		*field(b) = f
		return nil
	}
}

func enumSetter(field func(*Broker) *string, allowed ...string) setter {
	return func(b *Broker, key, v string) error {
		if err := oneOf(key, v, allowed...); err != nil {
			return err
		}
		*field(b) = v
		return nil
	}
}

// validateOnly checks a number and leaves the decision to resolve.
func validateInt(bits int, min int64) setter {
	return func(_ *Broker, key, v string) error {
		_, err := parseInt(key, v, bits, min)
		return err
	}
}

func validateListeners(_ *Broker, key, v string) error {
	_, err := parseListeners(key, v)
	return err
}

func acceptAny(*Broker, string, string) error { return nil }

const noMin = math.MinInt64

// DefaultPrincipalBuilder is principal.builder.class's default, Kafka's
// DefaultKafkaPrincipalBuilder, the one builder Gregor has.
const DefaultPrincipalBuilder = "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"

// brokerKey is one server.properties key Gregor applies (or validates for
// resolve): its setter, its Kafka type and its default, which
// DescribeConfigs shows (source DEFAULT_CONFIG) when server.properties
// leaves the key out.
type brokerKey struct {
	set setter
	typ kmsg.ConfigType
	// def renders the key's default from d = Defaults(). nil: the default is
	// null, as in Kafka (log.retention.ms: log.retention.hours decides;
	// advertised.listeners: derived from listeners).
	def func(d *Broker) string
}

func intType(bits int) kmsg.ConfigType {
	switch bits {
	case 16:
		return kmsg.ConfigTypeShort
	case 32:
		return kmsg.ConfigTypeInt
	}
	return kmsg.ConfigTypeLong
}

func intKey[T ~int | ~int16 | ~int32 | ~int64](field func(*Broker) *T, bits int, min int64) brokerKey {
	return brokerKey{intSetter(field, bits, min), intType(bits), func(d *Broker) string { return i64(int64(*field(d))) }}
}

func msKey(field func(*Broker) *time.Duration, bits int, min int64) brokerKey {
	return brokerKey{msSetter(field, bits, min), intType(bits), func(d *Broker) string { return i64(field(d).Milliseconds()) }}
}

func boolKey(field func(*Broker) *bool) brokerKey {
	return brokerKey{boolSetter(field), kmsg.ConfigTypeBoolean, func(d *Broker) string { return strconv.FormatBool(*field(d)) }}
}

func doubleKey(field func(*Broker) *float64, min, max float64) brokerKey {
	return brokerKey{doubleSetter(field, min, max), kmsg.ConfigTypeDouble, func(d *Broker) string { return strconv.FormatFloat(*field(d), 'g', -1, 64) }}
}

func enumKey(field func(*Broker) *string, allowed ...string) brokerKey {
	return brokerKey{enumSetter(field, allowed...), kmsg.ConfigTypeString, func(d *Broker) string { return *field(d) }}
}

// checkKey is a key without a Broker field of its own (resolve combines it
// with others, or the setter stores it itself), with its default.
func checkKey(set setter, typ kmsg.ConfigType, def string) brokerKey {
	return brokerKey{set, typ, func(*Broker) string { return def }}
}

// nullKey is a checkKey whose default is null.
func nullKey(set setter, typ kmsg.ConfigType) brokerKey { return brokerKey{set: set, typ: typ} }

// brokerKeys are the server.properties keys Gregor applies (or validates for
// resolve). Minimums follow Kafka's KafkaConfig validators; where Kafka has
// none but a negative value is meaningless, the minimum is 0 or 1 and the
// comment says so. Defaults are those of Defaults() (Kafka's, except
// broker.id: Gregor has no id generation, so 0).
var brokerKeys = map[string]brokerKey{
	"listeners":                       checkKey(validateListeners, kmsg.ConfigTypeString, "PLAINTEXT://:9092"),
	"advertised.listeners":            nullKey(validateListeners, kmsg.ConfigTypeString),
	"port":                            checkKey(validateInt(32, 0), kmsg.ConfigTypeInt, "9092"),
	"host.name":                       checkKey(acceptAny, kmsg.ConfigTypeString, ""),
	"advertised.port":                 nullKey(validateInt(32, 0), kmsg.ConfigTypeInt),
	"advertised.host.name":            nullKey(acceptAny, kmsg.ConfigTypeString),
	"log.dirs":                        nullKey(acceptAny, kmsg.ConfigTypeString),
	"log.dir":                         checkKey(acceptAny, kmsg.ConfigTypeString, "/tmp/kafka-logs"),
	"zookeeper.connect":               nullKey(acceptAny, kmsg.ConfigTypeString),
	"zookeeper.session.timeout.ms":    msKey(func(b *Broker) *time.Duration { return &b.ZookeeperSessionTimeout }, 32, 1),
	"zookeeper.connection.timeout.ms": nullKey(validateInt(32, 1), kmsg.ConfigTypeInt), // null: the session timeout

	"num.partitions":                 intKey(func(b *Broker) *int32 { return &b.NumPartitions }, 32, 1),
	"default.replication.factor":     intKey(func(b *Broker) *int16 { return &b.DefaultReplicationFactor }, 16, 1),
	"auto.create.topics.enable":      boolKey(func(b *Broker) *bool { return &b.AutoCreateTopicsEnable }),
	"delete.topic.enable":            boolKey(func(b *Broker) *bool { return &b.DeleteTopicEnable }),
	"min.insync.replicas":            intKey(func(b *Broker) *int { return &b.MinInsyncReplicas }, 32, 1),
	"unclean.leader.election.enable": boolKey(func(b *Broker) *bool { return &b.UncleanLeaderElection }),

	"log.retention.ms":                        nullKey(validateInt(64, noMin), kmsg.ConfigTypeLong), // negative = keep forever
	"log.retention.minutes":                   nullKey(validateInt(32, noMin), kmsg.ConfigTypeInt),
	"log.retention.hours":                     checkKey(validateInt(32, noMin), kmsg.ConfigTypeInt, "168"),
	"log.retention.bytes":                     intKey(func(b *Broker) *int64 { return &b.LogRetentionBytes }, 64, noMin),
	"log.segment.bytes":                       intKey(func(b *Broker) *int64 { return &b.LogSegmentBytes }, 32, 14), // LegacyRecord.RECORD_OVERHEAD_V0
	"log.roll.ms":                             nullKey(validateInt(64, 1), kmsg.ConfigTypeLong),
	"log.roll.hours":                          checkKey(validateInt(32, 1), kmsg.ConfigTypeInt, "168"),
	"log.retention.check.interval.ms":         msKey(func(b *Broker) *time.Duration { return &b.LogRetentionCheckInterval }, 64, 1),
	"log.flush.interval.messages":             intKey(func(b *Broker) *int64 { return &b.LogFlushIntervalMessages }, 64, 1),
	"log.flush.interval.ms":                   intKey(func(b *Broker) *int64 { return &b.LogFlushIntervalMs }, 64, 0),
	"log.flush.scheduler.interval.ms":         checkKey(validateInt(64, 0), kmsg.ConfigTypeLong, i64(math.MaxInt64)),
	"log.index.interval.bytes":                intKey(func(b *Broker) *int32 { return &b.LogIndexIntervalBytes }, 32, 0),
	"log.index.size.max.bytes":                intKey(func(b *Broker) *int32 { return &b.LogIndexSizeMaxBytes }, 32, 4),
	"log.cleanup.policy":                      {setCleanupPolicy, kmsg.ConfigTypeList, func(d *Broker) string { return d.LogCleanupPolicy }},
	"log.cleaner.enable":                      boolKey(func(b *Broker) *bool { return &b.LogCleanerEnable }),
	"log.message.downconversion.enable":       boolKey(func(b *Broker) *bool { return &b.LogMessageDownConversionEnable }),
	"log.cleaner.backoff.ms":                  msKey(func(b *Broker) *time.Duration { return &b.LogCleanerBackoff }, 64, 0),
	"log.cleaner.dedupe.buffer.size":          intKey(func(b *Broker) *int64 { return &b.LogCleanerDedupeBufferSize }, 64, 1),
	"log.cleaner.io.buffer.load.factor":       doubleKey(func(b *Broker) *float64 { return &b.LogCleanerLoadFactor }, 0.01, 1),
	"log.cleaner.min.cleanable.ratio":         doubleKey(func(b *Broker) *float64 { return &b.LogCleanerMinCleanableRatio }, 0, 1),
	"log.cleaner.delete.retention.ms":         intKey(func(b *Broker) *int64 { return &b.LogCleanerDeleteRetentionMs }, 64, 0),
	"log.cleaner.min.compaction.lag.ms":       intKey(func(b *Broker) *int64 { return &b.LogCleanerMinCompactionLagMs }, 64, 0),
	"log.cleaner.max.compaction.lag.ms":       intKey(func(b *Broker) *int64 { return &b.LogCleanerMaxCompactionLagMs }, 64, 1),
	"log.segment.delete.delay.ms":             intKey(func(b *Broker) *int64 { return &b.LogSegmentDeleteDelayMs }, 64, 0),
	"num.recovery.threads.per.data.dir":       intKey(func(b *Broker) *int { return &b.NumRecoveryThreadsPerDataDir }, 32, 1),
	"log.segment.fd.cache.size":               {setFDCacheSize, kmsg.ConfigTypeInt, func(d *Broker) string { return i64(int64(d.LogSegmentFDCacheSize)) }}, // Gregor
	"compression.type":                        enumKey(func(b *Broker) *string { return &b.CompressionType }, compressionTypes...),
	"log.message.timestamp.type":              enumKey(func(b *Broker) *string { return &b.MessageTimestampType }, timestampTypes...),
	"log.message.timestamp.difference.max.ms": intKey(func(b *Broker) *int64 { return &b.LogMessageTimestampDifferenceMaxMs }, 64, 0),

	"message.max.bytes":           intKey(func(b *Broker) *int32 { return &b.MessageMaxBytes }, 32, 0),
	"socket.request.max.bytes":    intKey(func(b *Broker) *int32 { return &b.SocketRequestMaxBytes }, 32, 1),
	"socket.send.buffer.bytes":    intKey(func(b *Broker) *int { return &b.SocketSendBufferBytes }, 32, -1), // -1 = OS default
	"socket.receive.buffer.bytes": intKey(func(b *Broker) *int { return &b.SocketReceiveBufferBytes }, 32, -1),
	"num.network.threads":         intKey(func(b *Broker) *int { return &b.NumNetworkThreads }, 32, 1),
	"num.io.threads":              intKey(func(b *Broker) *int { return &b.NumIOThreads }, 32, 1),
	"queued.max.requests":         intKey(func(b *Broker) *int { return &b.QueuedMaxRequests }, 32, 1),

	"offsets.topic.num.partitions":        intKey(func(b *Broker) *int32 { return &b.OffsetsTopicNumPartitions }, 32, 1),
	"offsets.topic.replication.factor":    intKey(func(b *Broker) *int16 { return &b.OffsetsTopicReplicationFactor }, 16, 1),
	"offsets.topic.segment.bytes":         intKey(func(b *Broker) *int64 { return &b.OffsetsTopicSegmentBytes }, 32, 1),
	"offsets.retention.minutes":           intKey(func(b *Broker) *int64 { return &b.OffsetsRetentionMinutes }, 32, 1),
	"offsets.retention.check.interval.ms": msKey(func(b *Broker) *time.Duration { return &b.OffsetsRetentionCheckInterval }, 64, 1),
	"offset.metadata.max.bytes":           intKey(func(b *Broker) *int32 { return &b.OffsetMetadataMaxBytes }, 32, 0), // Kafka: no minimum, but a negative value fails every commit (null metadata counts as "")
	"group.initial.rebalance.delay.ms":    msKey(func(b *Broker) *time.Duration { return &b.GroupInitialRebalanceDelay }, 32, 0),
	"group.min.session.timeout.ms":        msKey(func(b *Broker) *time.Duration { return &b.GroupMinSessionTimeout }, 32, 0),
	"group.max.session.timeout.ms":        msKey(func(b *Broker) *time.Duration { return &b.GroupMaxSessionTimeout }, 32, 0),
	"group.max.size":                      intKey(func(b *Broker) *int { return &b.GroupMaxSize }, 32, 1),

	"transaction.state.log.num.partitions":                        intKey(func(b *Broker) *int32 { return &b.TransactionStateLogNumPartitions }, 32, 1),
	"transaction.state.log.replication.factor":                    intKey(func(b *Broker) *int16 { return &b.TransactionStateLogReplicationFactor }, 16, 1),
	"transaction.state.log.min.isr":                               intKey(func(b *Broker) *int { return &b.TransactionStateLogMinIsr }, 32, 1),
	"transaction.state.log.segment.bytes":                         intKey(func(b *Broker) *int64 { return &b.TransactionStateLogSegmentBytes }, 32, 1),
	"transactional.id.expiration.ms":                              msKey(func(b *Broker) *time.Duration { return &b.TransactionalIDExpiration }, 32, 1),
	"transaction.max.timeout.ms":                                  msKey(func(b *Broker) *time.Duration { return &b.TransactionMaxTimeout }, 32, 1),
	"transaction.abort.timed.out.transaction.cleanup.interval.ms": msKey(func(b *Broker) *time.Duration { return &b.TransactionAbortTimedOutCleanupInterval }, 32, 1),
	"transaction.remove.expired.transaction.cleanup.interval.ms":  msKey(func(b *Broker) *time.Duration { return &b.TransactionRemoveExpiredCleanupInterval }, 32, 1),
	"transaction.partition.verification.enable":                   boolKey(func(b *Broker) *bool { return &b.TransactionPartitionVerificationEnable }),
	"producer.id.expiration.ms":                                   msKey(func(b *Broker) *time.Duration { return &b.ProducerIDExpiration }, 32, 1),
	"producer.id.expiration.check.interval.ms":                    msKey(func(b *Broker) *time.Duration { return &b.ProducerIDExpirationCheck }, 32, 1),

	// Connection quotas (connections.go, applied by wire/server).
	"max.connections":                  intKey(func(b *Broker) *int { return &b.ConnectionLimits.Max }, 32, 0),
	"max.connections.per.ip":           intKey(func(b *Broker) *int { return &b.ConnectionLimits.PerIP }, 32, 0),
	"max.connections.per.ip.overrides": checkKey(setConnectionOverrides, kmsg.ConfigTypeString, ""),
	"max.connection.creation.rate":     intKey(func(b *Broker) *int { return &b.ConnectionLimits.CreationRate }, 32, 0),

	"replica.lag.time.max.ms": msKey(func(b *Broker) *time.Duration { return &b.ReplicaLagTimeMax }, 64, 0),
	"num.replica.fetchers":    intKey(func(b *Broker) *int { return &b.NumReplicaFetchers }, 32, 1),

	// SASL (sasl.go resolves them with their listener-prefixed forms).
	"sasl.enabled.mechanisms":              checkKey(acceptAny, kmsg.ConfigTypeList, "GSSAPI"),
	"sasl.mechanism.inter.broker.protocol": checkKey(acceptAny, kmsg.ConfigTypeString, "GSSAPI"),
	"sasl.jaas.config":                     nullKey(acceptAny, kmsg.ConfigTypePassword),
	"connections.max.reauth.ms":            msKey(func(b *Broker) *time.Duration { return &b.SASL.ConnectionsMaxReauth }, 64, noMin),
	// principal.builder.class: only Kafka's default builder (User:<SASL
	// authorization id>, User:<mapped certificate DN>, else ANONYMOUS) is
	// built in; a custom class cannot run here, so it is refused.
	"principal.builder.class": checkKey(func(_ *Broker, key, v string) error {
		if v != "" && v != DefaultPrincipalBuilder {
			return invalid(key, v, "only %s (Kafka's default) is supported: Gregor cannot run a custom principal builder", DefaultPrincipalBuilder)
		}
		return nil
	}, kmsg.ConfigTypeClass, DefaultPrincipalBuilder),
	"sasl.server.max.receive.size": checkKey(intSetter(func(b *Broker) *int32 { return &b.SASL.ServerMaxReceiveSize }, 32, 1), kmsg.ConfigTypeInt, "524288"),

	"admin.listener": checkKey(setAdminListener, kmsg.ConfigTypeString, ""),
	"pid.file":       checkKey(func(b *Broker, _, v string) error { b.PidFile = v; return nil }, kmsg.ConfigTypeString, ""),
	"log.format": checkKey(func(b *Broker, key, v string) error {
		if v != "console" && v != "json" {
			return invalid(key, v, "expected console or json")
		}
		b.LogFormat = v
		return nil
	}, kmsg.ConfigTypeString, "console"),
}

// brokerSynonyms are the keys that set one broker setting, highest
// precedence first (Kafka's DynamicBrokerConfig.brokerConfigSynonyms, for
// the precedences resolve applies). Other keys are their own only synonym.
var brokerSynonyms = map[string][]string{
	"log.retention.ms":      {"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
	"log.retention.minutes": {"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
	"log.retention.hours":   {"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
	"log.roll.ms":           {"log.roll.ms", "log.roll.hours"},
	"log.roll.hours":        {"log.roll.ms", "log.roll.hours"},
}

func setCleanupPolicy(b *Broker, key, v string) error {
	p, _, err := parseCleanupPolicy(key, v)
	if err != nil {
		return err
	}
	b.LogCleanupPolicy = p
	return nil
}

// setAdminListener accepts "host:port" (empty host = all interfaces) or "" (off).
func setAdminListener(b *Broker, key, v string) error {
	if v == "" {
		b.AdminListener = ""
		return nil
	}
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return invalid(key, v, "expected host:port")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return invalid(key, v, "port must be a number in 0..65535")
	}
	b.AdminListener = v
	return nil
}

// setFDCacheSize: log.segment.fd.cache.size is -1 (automatic) or at least 1.
func setFDCacheSize(b *Broker, key, v string) error {
	n, err := parseInt(key, v, 32, -1)
	if err != nil {
		return err
	}
	if n == 0 {
		return invalid(key, v, "Value must be -1 (half the open-file limit) or at least 1")
	}
	b.LogSegmentFDCacheSize = int(n)
	return nil
}
