// Package config reads a Kafka server.properties file into a typed broker
// configuration, with Kafka's key names and defaults, and derives per-topic
// log configs (topic overrides over broker defaults).
//
// Entry points: Load (a server.properties file), Parse (a key/value map),
// Broker.LogConfig (broker-wide log defaults), TopicLogConfig and
// Broker.TopicPolicy (a topic's overrides validated Kafka-style),
// Broker.DescribeTopicConfigs (DescribeConfigs entries for a topic).
// README.md lists the keys Gregor accepts but does not act on yet.
package config

import (
	"math"
	"time"
)

// Listener is one entry of listeners / advertised.listeners
// ("PLAINTEXT://host:port").
type Listener struct {
	Name string // listener name, e.g. "PLAINTEXT"
	Host string // "" = all interfaces (only for listeners)
	Port int    // 0..65535; 0 in listeners = an ephemeral port chosen at bind
}

// Broker is the broker configuration. Every field names its Kafka key.
type Broker struct {
	BrokerID            int32      // broker.id, default 0 (Kafka's -1); -1 = from meta.properties or generated (broker_id.go)
	Listeners           []Listener // listeners, default PLAINTEXT://:9092 (or legacy host.name/port)
	AdvertisedListeners []Listener // advertised.listeners, default = listeners (empty host → hostname)
	// Security: listener.security.protocol.map, inter.broker.listener.name /
	// security.inter.broker.protocol, control.plane.listener.name,
	// ssl.principal.mapping.rules as resolved (security.go).
	Security                   Security
	LogDirs                    []string      // log.dirs (or log.dir), default /tmp/kafka-logs
	ZookeeperConnect           string        // zookeeper.connect; "" = embedded metadata (single node)
	ZookeeperSessionTimeout    time.Duration // zookeeper.session.timeout.ms, default 18000
	ZookeeperConnectionTimeout time.Duration // zookeeper.connection.timeout.ms, default = session timeout

	NumPartitions            int32 // num.partitions, default 1
	DefaultReplicationFactor int16 // default.replication.factor, default 1
	AutoCreateTopicsEnable   bool  // auto.create.topics.enable, default true
	DeleteTopicEnable        bool  // delete.topic.enable, default true
	MinInsyncReplicas        int   // min.insync.replicas, default 1
	UncleanLeaderElection    bool  // unclean.leader.election.enable, default false

	LogRetentionMs               int64         // log.retention.ms > .minutes > .hours (168); -1 keeps forever
	LogRetentionBytes            int64         // log.retention.bytes, default -1
	LogSegmentBytes              int64         // log.segment.bytes, default 1073741824
	LogRollMs                    int64         // log.roll.ms > log.roll.hours (168)
	LogRollJitterMs              int64         // log.roll.jitter.ms > log.roll.jitter.hours (0): segment.jitter.ms's default
	LogRetentionCheckInterval    time.Duration // log.retention.check.interval.ms, default 300000
	LogFlushIntervalMessages     int64         // log.flush.interval.messages, default MaxInt64
	LogFlushIntervalMs           int64         // log.flush.interval.ms, default MaxInt64 (log.flush.scheduler.interval.ms checks)
	LogIndexIntervalBytes        int32         // log.index.interval.bytes, default 4096
	LogIndexSizeMaxBytes         int32         // log.index.size.max.bytes, default 10485760
	LogCleanupPolicy             string        // log.cleanup.policy, default "delete" ("compact", "delete" or "compact,delete")
	LogCleanerEnable             bool          // log.cleaner.enable, default true
	LogCleanerBackoff            time.Duration // log.cleaner.backoff.ms, default 15000: pause between cleaner passes
	LogCleanerDedupeBufferSize   int64         // log.cleaner.dedupe.buffer.size, default 134217728 (key map memory)
	LogCleanerLoadFactor         float64       // log.cleaner.io.buffer.load.factor, default 0.9
	LogCleanerMinCleanableRatio  float64       // log.cleaner.min.cleanable.ratio, default 0.5 (min.cleanable.dirty.ratio)
	LogCleanerDeleteRetentionMs  int64         // log.cleaner.delete.retention.ms, default 86400000 (delete.retention.ms)
	LogCleanerMinCompactionLagMs int64         // log.cleaner.min.compaction.lag.ms, default 0 (min.compaction.lag.ms)
	LogCleanerMaxCompactionLagMs int64         // log.cleaner.max.compaction.lag.ms, default MaxInt64 (max.compaction.lag.ms)
	LogSegmentDeleteDelayMs      int64         // log.segment.delete.delay.ms, default 60000
	NumRecoveryThreadsPerDataDir int           // num.recovery.threads.per.data.dir, default 1
	// NumReplicaAlterLogDirsThreads is num.replica.alter.log.dirs.threads
	// (default null = the number of log.dirs, at least 1): how many
	// AlterReplicaLogDirs copies run at once (partition.ManagerConfig).
	NumReplicaAlterLogDirsThreads int
	// LogSegmentFDCacheSize: log.segment.fd.cache.size (Gregor), default -1.
	// How many segments (across all partitions) may keep their .log
	// descriptor and memory-mapped indexes open while not being read or
	// written; others are reopened on demand. -1 = half the process's
	// open-file limit (RLIMIT_NOFILE), so 20,000 idle partitions fit a
	// 20,000 open-file limit. Kafka has no such key: it keeps every
	// segment's .log open.
	LogSegmentFDCacheSize int
	CompressionType       string // compression.type, default "producer"
	MessageTimestampType  string // log.message.timestamp.type, default "CreateTime"
	// LogMessageTimestampDifferenceMaxMs: log.message.timestamp.difference.max.ms,
	// default MaxInt64 (ms a CreateTime timestamp may differ from the broker clock).
	LogMessageTimestampDifferenceMaxMs int64
	// LogMessageTimestampBeforeMaxMs and LogMessageTimestampAfterMaxMs:
	// log.message.timestamp.before.max.ms and
	// log.message.timestamp.after.max.ms (KIP-937), default MaxInt64 =
	// take log.message.timestamp.difference.max.ms (Kafka 3.6+'s rule).
	LogMessageTimestampBeforeMaxMs, LogMessageTimestampAfterMaxMs int64
	// LogMessageDownConversionEnable: log.message.downconversion.enable,
	// default true: whether Fetch v0-v3 consumers get record batches
	// down-converted to message format v0/v1 (false: UNSUPPORTED_VERSION).
	LogMessageDownConversionEnable bool

	MessageMaxBytes          int32 // message.max.bytes, default 1048588
	SocketRequestMaxBytes    int32 // socket.request.max.bytes, default 104857600
	SocketSendBufferBytes    int   // socket.send.buffer.bytes, default 102400; -1 = OS default
	SocketReceiveBufferBytes int   // socket.receive.buffer.bytes, default 102400; -1 = OS default
	// NumNetworkThreads (num.network.threads, default 3) and NumIOThreads
	// (num.io.threads, default 8) are accepted for compatibility. Go has no
	// fixed thread pools here: each connection has its own reader and writer
	// goroutines, and GOMAXPROCS decides parallelism. NumIOThreads bounds the
	// requests handled concurrently per connection (pipelining depth).
	NumNetworkThreads int
	NumIOThreads      int
	QueuedMaxRequests int // queued.max.requests, default 500
	// MaxRequestPartitionSizeLimit is max.request.partition.size.limit
	// (default 2000, at least 1): the most partitions one
	// DescribeTopicPartitions response carries (KIP-966).
	MaxRequestPartitionSizeLimit int32
	// ConnectionLimits are max.connections, max.connections.per.ip(.overrides)
	// and max.connection.creation.rate (connections.go).
	ConnectionLimits ConnectionLimits
	// SocketServer are connections.max.idle.ms,
	// connection.failed.authentication.delay.ms, socket.listen.backlog.size
	// and queued.max.request.bytes (socket_server.go).
	SocketServer SocketServer
	// IDGeneration are broker.id.generation.enable and
	// reserved.broker.max.id (broker_id.go).
	IDGeneration IDGeneration
	// Coordinators are offsets.topic.compression.codec, offsets.commit.*,
	// the load buffer sizes and request.timeout.ms (coordinator_keys.go).
	Coordinators Coordinators
	// Quotas are the quota windows and replication throttle rates (quotas.go).
	Quotas Quotas
	// PasswordEncoder is password.encoder.* (password_encoder.go): how
	// dynamic password configs are stored.
	PasswordEncoder PasswordEncoder

	OffsetsTopicNumPartitions     int32         // offsets.topic.num.partitions, default 50
	OffsetsTopicReplicationFactor int16         // offsets.topic.replication.factor, default 3; with ZooKeeper __consumer_offsets waits for that many live brokers, embedded single node caps it at 1
	OffsetsTopicSegmentBytes      int64         // offsets.topic.segment.bytes, default 104857600
	OffsetsRetentionMinutes       int64         // offsets.retention.minutes, default 10080
	OffsetsRetentionCheckInterval time.Duration // offsets.retention.check.interval.ms, default 600000: how often expired offsets are removed
	OffsetMetadataMaxBytes        int32         // offset.metadata.max.bytes, default 4096: longer commit metadata (in UTF-16 units, as Kafka's String.length) gets OFFSET_METADATA_TOO_LARGE
	GroupInitialRebalanceDelay    time.Duration // group.initial.rebalance.delay.ms, default 3000
	GroupMinSessionTimeout        time.Duration // group.min.session.timeout.ms, default 6000
	GroupMaxSessionTimeout        time.Duration // group.max.session.timeout.ms, default 1800000
	GroupMaxSize                  int           // group.max.size, default MaxInt32

	TransactionStateLogNumPartitions     int32         // transaction.state.log.num.partitions, default 50
	TransactionStateLogReplicationFactor int16         // transaction.state.log.replication.factor, default 3
	TransactionStateLogMinIsr            int           // transaction.state.log.min.isr, default 2
	TransactionStateLogSegmentBytes      int64         // transaction.state.log.segment.bytes, default 104857600
	TransactionalIDExpiration            time.Duration // transactional.id.expiration.ms, default 604800000
	// TransactionMaxTimeout is transaction.max.timeout.ms (default 900000):
	// InitProducerId with a larger transaction.timeout.ms gets
	// INVALID_TRANSACTION_TIMEOUT.
	TransactionMaxTimeout time.Duration
	// TransactionAbortTimedOutCleanupInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms (default
	// 10000): how often the coordinator aborts transactions older than
	// their timeout.
	TransactionAbortTimedOutCleanupInterval time.Duration
	// TransactionRemoveExpiredCleanupInterval is
	// transaction.remove.expired.transaction.cleanup.interval.ms (default
	// 3600000): how often transactional ids idle longer than
	// transactional.id.expiration.ms are removed.
	TransactionRemoveExpiredCleanupInterval time.Duration
	// TransactionPartitionVerificationEnable is
	// transaction.partition.verification.enable (default true; KIP-890
	// part 1, Kafka 3.6+): a partition leader appends a transactional
	// batch that opens the producer's transaction there only once the
	// transaction coordinator confirms the partition was added
	// (AddPartitionsToTxn v4+ VerifyOnly); else INVALID_TXN_STATE. False:
	// appended unchecked, as before Kafka 3.6. A dynamic broker config in
	// Kafka; here read at start.
	TransactionPartitionVerificationEnable bool
	// ProducerIDExpiration is producer.id.expiration.ms (KIP-854, default
	// 86400000, at least 1): a partition leader forgets a producer id with
	// no open transaction whose last batch is older than this.
	ProducerIDExpiration time.Duration
	// ProducerIDExpirationCheck is producer.id.expiration.check.interval.ms
	// (Kafka's internal key, default 600000, at least 1): how often each
	// partition looks for expired producer ids.
	ProducerIDExpirationCheck time.Duration

	// SASL is sasl.enabled.mechanisms, sasl.mechanism.inter.broker.protocol,
	// connections.max.reauth.ms, sasl.jaas.config and their
	// listener.name.<l>[.<mech>] forms, per SASL listener (sasl.go).
	SASL SASLConfig

	ReplicaLagTimeMax time.Duration // replica.lag.time.max.ms, default 30000
	// AutoLeaderRebalance is auto.leader.rebalance.enable and
	// leader.imbalance.* (leadership.go).
	AutoLeaderRebalance AutoLeaderRebalance
	NumReplicaFetchers  int // num.replica.fetchers, default 1
	// ReplicaFetch is replica.fetch.* and replica.socket.* (replication.go).
	ReplicaFetch ReplicaFetch
	// ControlledShutdown is controlled.shutdown.* (replication.go).
	ControlledShutdown ControlledShutdown
	// ControllerSocketTimeout is controller.socket.timeout.ms (default
	// 30000, at least 1): the bound of one attempt of a controller channel
	// send (connect and answer) and of one ControlledShutdown request.
	ControllerSocketTimeout time.Duration
	// Checkpoints are the checkpoint and flush scheduler intervals
	// (checkpoints.go).
	Checkpoints Checkpoints
	// CleanerIO is log.cleaner.threads and log.cleaner.io.* (cleaner_io.go).
	CleanerIO CleanerIO
	// ConnectionSetup is socket.connection.setup.timeout{,.max}.ms
	// (connection_setup.go).
	ConnectionSetup ConnectionSetup
	// ReplicaSelector is replica.selector.class (KIP-392): "" (Kafka's
	// null default: consumers read from the leader, which never names a
	// preferred read replica) or RackAwareReplicaSelector. Read at start.
	ReplicaSelector string

	// Authorizer: authorizer.class.name, super.users,
	// allow.everyone.if.no.acl.found (authorizer.go).
	Authorizer Authorizer

	AdminListener string // admin.listener (Gregor): host:port of the HTTP admin listener; "" = off
	// AdminListenerSecurity is admin.listener.ssl.* and
	// admin.listener.auth.token.file (Gregor; admin_listener.go).
	AdminListenerSecurity AdminListenerSecurity
	PidFile               string // pid.file (Gregor): the server writes its process id here while it runs; "" = none
	LogFormat             string // log.format (Gregor): "console" (default, human-readable lines) or "json" (one JSON object per line)

	// Raw holds every key as read (values trimmed), for DescribeConfigs and
	// topic defaults. Unknown keys are kept too.
	Raw map[string]string
}

// Defaults returns a Broker holding Kafka's defaults for every field (the
// configuration of an empty server.properties). Listeners is
// PLAINTEXT://:9092; AdvertisedListeners is left empty here and derived by
// Parse.
func Defaults() *Broker {
	return &Broker{
		BrokerID:                   0,
		Listeners:                  []Listener{{Name: "PLAINTEXT", Port: 9092}},
		LogDirs:                    []string{"/tmp/kafka-logs"},
		ZookeeperSessionTimeout:    18000 * time.Millisecond,
		ZookeeperConnectionTimeout: 18000 * time.Millisecond,

		NumPartitions:            1,
		DefaultReplicationFactor: 1,
		AutoCreateTopicsEnable:   true,
		DeleteTopicEnable:        true,
		MinInsyncReplicas:        1,

		LogRetentionMs:                     168 * hourMs,
		LogRetentionBytes:                  -1,
		LogSegmentBytes:                    1 << 30,
		LogRollMs:                          168 * hourMs,
		LogRetentionCheckInterval:          300000 * time.Millisecond,
		LogFlushIntervalMessages:           math.MaxInt64,
		LogFlushIntervalMs:                 math.MaxInt64,
		LogIndexIntervalBytes:              4096,
		LogIndexSizeMaxBytes:               10 << 20,
		LogCleanupPolicy:                   "delete",
		LogCleanerEnable:                   true,
		LogCleanerBackoff:                  15 * time.Second,
		LogCleanerDedupeBufferSize:         128 << 20,
		LogCleanerLoadFactor:               0.9,
		LogCleanerMinCleanableRatio:        0.5,
		LogCleanerDeleteRetentionMs:        86400000,
		LogCleanerMaxCompactionLagMs:       math.MaxInt64,
		LogSegmentDeleteDelayMs:            60000,
		NumRecoveryThreadsPerDataDir:       1,
		LogSegmentFDCacheSize:              -1,
		CompressionType:                    "producer",
		MessageTimestampType:               "CreateTime",
		LogMessageTimestampDifferenceMaxMs: math.MaxInt64,
		LogMessageTimestampBeforeMaxMs:     math.MaxInt64,
		LogMessageTimestampAfterMaxMs:      math.MaxInt64,
		LogMessageDownConversionEnable:     true,

		MessageMaxBytes:              1048588,
		SocketRequestMaxBytes:        104857600,
		SocketSendBufferBytes:        102400,
		SocketReceiveBufferBytes:     102400,
		NumNetworkThreads:            3,
		NumIOThreads:                 8,
		QueuedMaxRequests:            500,
		MaxRequestPartitionSizeLimit: defaultMaxRequestPartitionSizeLimit,
		ConnectionLimits:             defaultConnectionLimits(),
		SocketServer:                 defaultSocketServer(),
		IDGeneration:                 IDGeneration{Enable: true, ReservedMaxID: 1000},
		Coordinators:                 defaultCoordinators(),
		Quotas:                       defaultQuotas(),
		PasswordEncoder:              defaultPasswordEncoder(),

		OffsetsTopicNumPartitions:     50,
		OffsetsTopicReplicationFactor: 3,
		OffsetsTopicSegmentBytes:      104857600,
		OffsetsRetentionMinutes:       10080,
		OffsetsRetentionCheckInterval: 600000 * time.Millisecond,
		OffsetMetadataMaxBytes:        4096,
		GroupInitialRebalanceDelay:    3000 * time.Millisecond,
		GroupMinSessionTimeout:        6000 * time.Millisecond,
		GroupMaxSessionTimeout:        1800000 * time.Millisecond,
		GroupMaxSize:                  math.MaxInt32,

		TransactionStateLogNumPartitions:        50,
		TransactionStateLogReplicationFactor:    3,
		TransactionStateLogMinIsr:               2,
		TransactionStateLogSegmentBytes:         104857600,
		TransactionalIDExpiration:               604800000 * time.Millisecond,
		TransactionMaxTimeout:                   900000 * time.Millisecond,
		TransactionAbortTimedOutCleanupInterval: 10000 * time.Millisecond,
		TransactionRemoveExpiredCleanupInterval: 3600000 * time.Millisecond,
		TransactionPartitionVerificationEnable:  true,
		ProducerIDExpiration:                    86400000 * time.Millisecond,
		ProducerIDExpirationCheck:               600000 * time.Millisecond,

		ReplicaLagTimeMax:       30000 * time.Millisecond,
		AutoLeaderRebalance:     defaultAutoLeaderRebalance(),
		NumReplicaFetchers:      1,
		ReplicaFetch:            defaultReplicaFetch(),
		ControlledShutdown:      ControlledShutdown{Enable: true, MaxRetries: 3, RetryBackoff: 5 * time.Second},
		ControllerSocketTimeout: 30 * time.Second,
		Checkpoints:             defaultCheckpoints(),
		CleanerIO:               defaultCleanerIO(),
		ConnectionSetup:         defaultConnectionSetup(),

		Raw: map[string]string{},
	}
}

const (
	minuteMs = int64(60 * 1000)
	hourMs   = 60 * minuteMs
)
