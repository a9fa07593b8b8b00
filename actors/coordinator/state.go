package coordinator

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// State is a group's state (Kafka's GroupState). The names returned by
// String are the ones DescribeGroups and ListGroups (v4+ states filter) use.
type State int8

const (
	// Empty: no members; the group may still hold committed offsets.
	Empty State = iota
	// PreparingRebalance: waiting for members to (re)join.
	PreparingRebalance
	// CompletingRebalance: JoinGroup answered, waiting for the leader's SyncGroup.
	CompletingRebalance
	// Stable: assignment propagated; members heartbeat.
	Stable
	// Dead: no members and no offsets, or deleted; the group is about to be removed.
	Dead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

// String is Kafka's name for the state.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "Unknown"
	}
	return stateNames[s]
}

// ParseState maps a Kafka state name (case-insensitive, as in the ListGroups
// states filter) to a State.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if equalFold(n, name) {
			return State(i), true
		}
	}
	return 0, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Config holds the group settings of the broker config (config.Broker).
type Config struct {
	// MinSessionTimeout / MaxSessionTimeout bound a member's session
	// timeout: group.min.session.timeout.ms (6 s) and
	// group.max.session.timeout.ms (30 min). Outside → INVALID_SESSION_TIMEOUT.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms (3 s): how
	// long the first rebalance of an empty group waits for more members.
	InitialRebalanceDelay time.Duration
	// MaxSize is group.max.size (MaxInt32): members beyond it get
	// GROUP_MAX_SIZE_REACHED.
	MaxSize int
	// NewMemberJoinTimeout bounds how long a new member's JoinGroup may wait
	// in a rebalance before it is dropped (Kafka's fixed 5 minutes).
	NewMemberJoinTimeout time.Duration
	// OffsetsRetention is offsets.retention.minutes (7 days): offsets of a
	// group that has been empty this long are deleted.
	OffsetsRetention time.Duration
	// MaxMetadataSize is offset.metadata.max.bytes (4096): commit metadata
	// longer than this, in UTF-16 code units as Kafka's String.length
	// counts (bytes only for ASCII), gets OFFSET_METADATA_TOO_LARGE. 0
	// allows only empty metadata; negative means the default.
	MaxMetadataSize int
}

// DefaultConfig is Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		MinSessionTimeout:     6 * time.Second,
		MaxSessionTimeout:     30 * time.Minute,
		InitialRebalanceDelay: 3 * time.Second,
		MaxSize:               1<<31 - 1,
		NewMemberJoinTimeout:  5 * time.Minute,
		OffsetsRetention:      7 * 24 * time.Hour,
		MaxMetadataSize:       4096,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MinSessionTimeout <= 0 {
		c.MinSessionTimeout = d.MinSessionTimeout
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = d.MaxSessionTimeout
	}
	if c.InitialRebalanceDelay < 0 {
		c.InitialRebalanceDelay = 0
	}
	if c.MaxSize <= 0 {
		c.MaxSize = d.MaxSize
	}
	if c.NewMemberJoinTimeout <= 0 {
		c.NewMemberJoinTimeout = d.NewMemberJoinTimeout
	}
	if c.OffsetsRetention <= 0 {
		c.OffsetsRetention = d.OffsetsRetention
	}
	if c.MaxMetadataSize < 0 {
		c.MaxMetadataSize = d.MaxMetadataSize
	}
	return c
}

// Record is one __consumer_offsets record: a key and a value; a nil Value
// is a tombstone (deletes the key under compaction).
type Record struct {
	Key, Value []byte
}

// Store makes records durable in the group's __consumer_offsets partition.
// Append returns the log offset of the batch's first record once the
// records are committed (acks=all semantics), or the error; the records
// are either all written or none (one batch).
type Store interface {
	Append(b Batch) (baseOffset int64, err error)
}

// Batch is one append to __consumer_offsets: its records and, for a
// TxnOffsetCommit, the transactional producer that wrote them.
type Batch struct {
	Records []Record
	// Producer is nil for the coordinator's own records (plain batch, no
	// producer id). A TxnOffsetCommit's records carry the producer's id and
	// epoch in a transactional batch with base sequence -1, Kafka's
	// AppendOrigin.COORDINATOR: the partition checks the epoch but not the
	// sequence, and the records stay invisible (pending) until the
	// transaction's COMMIT or ABORT marker.
	Producer *TxnProducer
	// VerificationGuard is the KIP-890 verification guard the
	// TxnOffsetCommit's transaction was verified with on the group's
	// __consumer_offsets partition (partition.Handle.StartTxnVerification,
	// Kafka's verificationGuard of storeOffsets); 0 when none was needed
	// or verification is off. Only with Producer.
	VerificationGuard uint64
}

// TxnProducer identifies a transactional producer (TxnOffsetCommit's
// ProducerId and ProducerEpoch, KIP-98).
type TxnProducer struct {
	ID    int64
	Epoch int16
}

// storeErrorCode maps a Store failure to the error code Kafka returns for
// a failed offset commit (commit) or group metadata write — the ZooKeeper-
// mode GroupMetadataManager's tables of storeOffsets and storeGroup
// (Kafka 2.8–3.9):
//
//	UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS,
//	NOT_ENOUGH_REPLICAS_AFTER_APPEND        → COORDINATOR_NOT_AVAILABLE
//	NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR → NOT_COORDINATOR
//	REQUEST_TIMED_OUT                       → REBALANCE_IN_PROGRESS (group);
//	                                          kept for commits
//	MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE,
//	INVALID_FETCH_SIZE                      → INVALID_COMMIT_OFFSET_SIZE
//	                                          (commit), UNKNOWN_SERVER_ERROR (group)
//	any other Kafka error                   → itself
//
// An error that is no Kafka error (the append's context ended, an I/O
// failure) is COORDINATOR_NOT_AVAILABLE, which clients retry after
// finding the coordinator again; an append abandoned by its stopping or
// restarting group actor gets the code it was abandoned with.
func storeErrorCode(err error, commit bool) int16 {
	var ab errAbandoned
	if errors.As(err, &ab) {
		return ab.code
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.CoordinatorNotAvailable.Code
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return kerr.NotCoordinator.Code
	case kerr.RequestTimedOut:
		if commit {
			return ke.Code
		}
		return kerr.RebalanceInProgress.Code
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		if commit {
			return kerr.InvalidCommitOffsetSize.Code
		}
		return kerr.UnknownServerError.Code
	}
	return ke.Code
}

// TopicPartition keys committed offsets.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// OffsetAndMetadata is one committed offset (OffsetCommitValue).
type OffsetAndMetadata struct {
	Offset      int64
	LeaderEpoch int32 // -1 when unknown
	Metadata    string
	CommitTime  time.Time
	// ExpireTime is set only by OffsetCommit v2–v4 with an explicit
	// retention time (value version 1); zero otherwise.
	ExpireTime time.Time
}
