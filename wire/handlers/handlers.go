// Package handlers holds one file per Kafka API key (kfake-style names:
// 00_produce.go, 01_fetch.go, …). Each file starts with a header comment
// listing the versions served and behaviour notes, and registers its handler
// in init() with register(key, minVersion, maxVersion, fn). The advertised
// ApiVersions ranges come from these registrations.
package handlers

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/config"
	"gregor/config/dynamic"
	"gregor/logging"
	"gregor/quota/clientquota"
	"gregor/replication/metadata"
	"gregor/replication/metastore"
	"gregor/replication/throttle"
	"gregor/wire"
	"gregor/wire/security/acl"
)

// HandlerFunc serves one decoded request. It runs on the connection's reader
// goroutine, in request order; anything that waits must return wire.Later.
type HandlerFunc func(b *Broker, rc *wire.RequestContext, req kmsg.Request) wire.Reply

type entry struct {
	r  wire.ApiRange
	fn HandlerFunc
}

var registry = map[int16]entry{}

// register adds the handler for an API key; called from init() in each handler file.
func register(key, minV, maxV int16, fn HandlerFunc) {
	if _, dup := registry[key]; dup {
		panic("handlers: API key registered twice")
	}
	registry[key] = entry{r: wire.ApiRange{Key: key, MinVersion: minV, MaxVersion: maxV}, fn: fn}
}

// Broker is the set of dependencies that handlers use. It implements
// wire.Dispatcher.
type Broker struct {
	Config   *config.Broker
	Log      *zap.Logger
	Replicas ReplicaSource // partitions hosted here (deps_replicas.go)
	// LogDirs describes log.dirs for DescribeLogDirs (deps_replicas.go);
	// nil = DescribeLogDirs answers UNKNOWN_SERVER_ERROR.
	LogDirs LogDirSource
	Topics  TopicSource // topic metadata and admin (deps_topics.go)
	Groups  GroupSource // group coordinator (deps_groups.go); nil = COORDINATOR_NOT_AVAILABLE
	// Txns is the transaction coordinator (deps_txns.go); nil = the
	// transaction APIs answer COORDINATOR_NOT_AVAILABLE (FindCoordinator) or
	// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (InitProducerId), as before.
	Txns TxnSource
	// TxnVerifier verifies a transactional batch's partition with the
	// coordinator before the leader appends it (KIP-890 part 1,
	// transaction.partition.verification.enable), and a TxnOffsetCommit's
	// group partition before the group coordinator appends its offsets;
	// nil = not verified, as Kafka before 3.6.
	TxnVerifier TxnVerifier
	Cluster     ClusterSource // controller protocol (deps_cluster.go); nil = inter-broker APIs refused
	// Forward sends what only the active controller can do (CreateTopics,
	// DeleteTopics, CreatePartitions, ElectLeaders, the reassignment
	// APIs) to it when this broker is not the controller (KIP-590,
	// forward.go); nil = those answer NOT_CONTROLLER here, as Kafka 2.x.
	Forward ControllerForwarder
	// Authorizer decides every API's access checks (auth.go); nil = no
	// authorizer configured: everything is allowed and the ACL APIs
	// answer SECURITY_DISABLED.
	Authorizer *acl.Authorizer
	// ACLs writes and reads the ACLs of CreateAcls/DeleteAcls/DescribeAcls
	// (set with Authorizer).
	ACLs *acl.Admin
	// Users is where SCRAM credentials live (/config/users in the
	// metadata store, deps_users.go); nil = DescribeUserScramCredentials
	// and AlterUserScramCredentials answer UNKNOWN_SERVER_ERROR.
	// It also holds the dynamic broker configs (/config/brokers/<id>,
	// <default>) that AlterConfigs and IncrementalAlterConfigs write.
	Users metastore.Store
	// Dynamic is this broker's dynamic config layer (config/dynamic):
	// BROKER resources are validated against it and described with its
	// sources; nil = BROKER alters answer INVALID_REQUEST and describes
	// show the static config only.
	Dynamic *dynamic.Manager
	// Loggers are the broker's run-time log levels (BROKER_LOGGER
	// resources, KIP-412; configs_broker_logger.go); nil = they are
	// described as root alone and every logger name is unknown.
	Loggers *logging.Levels
	// QuotaStore is where client quotas live (/config/users,
	// /config/clients in the metadata store; the same store as Users):
	// AlterClientQuotas writes it, DescribeClientQuotas reads it; nil =
	// both answer UNKNOWN_SERVER_ERROR.
	QuotaStore metastore.Store
	// ConsumerStore is where OffsetCommit v0 and OffsetFetch v0 keep the
	// pre-0.9 consumers' offsets, /consumers/<group>/offsets/<topic>/<p>
	// (ZooKeeper, or the embedded store's same tree; offsets_zk.go); nil
	// = those versions answer UNKNOWN_SERVER_ERROR per partition.
	ConsumerStore metastore.Store
	// Quotas are the client quota managers (quota/clientquota): every
	// response's throttle time and the connection's mute come from them
	// (quotas.go); nil = no client quotas.
	Quotas *clientquota.Manager
	// Metrics counts per-topic fetch traffic (cmd/internal/admin): the
	// record bytes n of one Fetch response for topic, replication when the
	// fetch came from a follower broker (Kafka's BytesOutPerSec counts
	// consumers only, ReplicationBytesOutPerSec followers); nil = none.
	Metrics interface {
		FetchBytesOut(topic string, n int64, replication bool)
	}
	// LeaderQuota is the leader replication quota
	// (leader.replication.throttled.rate with the topic configs
	// leader.replication.throttled.replicas): a follower's Fetch leaves
	// out its throttled, out-of-sync partitions while it is exceeded
	// (01_fetch.go). nil = no throttling.
	LeaderQuota *throttle.Quota
	// Features are the finalized features this broker read from /feature
	// (KIP-584; ApiVersions v3+ answers them, 18_api_versions.go); nil =
	// none, epoch -1.
	Features *metadata.FeatureCache

	// tasks owns the goroutines answering requests Later (tasks.go).
	tasks tasks
	// metadataAll is the full Metadata listing of the newest snapshot a
	// request asked for (metadata_cache.go).
	metadataAll atomic.Pointer[metadataListing]
	// txnOrder orders the verified resends of a producer's pipelined
	// transactional produces (produce_verify_order.go).
	txnOrder verifyOrder
}

// Handle implements wire.Dispatcher.
func (b *Broker) Handle(rc *wire.RequestContext, req kmsg.Request) wire.Reply {
	e, ok := registry[rc.Key]
	if !ok {
		// The server only dispatches supported keys; this is a programming error.
		b.Log.Error("no handler for API key", zap.Int16("key", rc.Key))
		return wire.Now(wire.Response{CloseConn: true, None: true})
	}
	if b.Quotas == nil {
		return e.fn(b, rc, req)
	}
	start := time.Now()
	return b.withQuotas(rc, req, e.fn(b, rc, req), start)
}

// Supported implements wire.Dispatcher: every registered key and its versions, by key.
func (b *Broker) Supported() []wire.ApiRange { return SupportedRanges() }

// SupportedRanges lists the registered API ranges sorted by key.
func SupportedRanges() []wire.ApiRange {
	out := make([]wire.ApiRange, 0, len(registry))
	for _, e := range registry {
		out = append(out, e.r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
