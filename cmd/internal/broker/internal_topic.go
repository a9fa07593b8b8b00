package broker

import (
	"context"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors/coordinator"
	"gregor/actors/txncoordinator"
	"gregor/config"
	"gregor/partition"
	"gregor/replication/controller"
	"gregor/replication/metadata"
	"gregor/storage"
	"gregor/storage/record"
)

// topicSpec is how one of Kafka's internal topics is created on first use:
// __consumer_offsets for the group coordinator (offsets_topic.go),
// __transaction_state for the transaction coordinator (txn_topic.go).
type topicSpec struct {
	name       string
	partitions int32
	rf         int16
	rfKey      string // the broker key of rf, for messages
	// minIsr is the topic's min.insync.replicas override (0: none, the
	// broker default applies); capped with rf on the single node.
	minIsr  int
	configs map[string]string
	// loadBuffer is offsets.load.buffer.size or
	// transaction.state.log.load.buffer.size: the bytes Load reads at a
	// time (at least one batch, however large, as Kafka grows its buffer).
	loadBuffer int32
	// leaderAcks: appends wait for the leader only (acks=1), not the ISR;
	// offsets.commit.required.acks 0 or 1.
	leaderAcks bool
}

// internalTopic gives a coordinator its internal topic's partitions: it
// creates the topic through the controller, appends through the partition
// actors (acks=all) and reads the partitions' logs for reloading state.
//
// The coordinators are built before the replica manager and the controller
// (broker.go), so replicas and topics are filled in afterwards, on Start's
// goroutine, before the listeners open and the controller starts. Nothing
// calls the methods before then: they serve requests and the loads of
// partitions led here (after a LeaderAndIsr, which the controller's start
// precedes).
type internalTopic struct {
	spec     topicSpec
	cfg      *config.Broker
	replicas *partition.Manager
	topics   interface {
		Snapshot() *metadata.Snapshot
		CreateTopics(topics []controller.NewTopic, validateOnly bool) []controller.CreatedTopic
	}
}

var (
	_ coordinator.OffsetsTopic  = (*internalTopic)(nil)
	_ txncoordinator.StateTopic = (*internalTopic)(nil)
)

func (o *internalTopic) tp(p int32) partition.TopicPartition {
	return partition.TopicPartition{Topic: o.spec.name, Partition: p}
}

// Ensure creates the topic on first use, as Kafka does, with its spec's
// partitions, replicas and configs.
//
// Like Kafka (KafkaApis' internal topic creation), it refuses while fewer
// brokers are alive than the replication factor and answers
// COORDINATOR_NOT_AVAILABLE, which clients retry: the topic is created
// with the configured factor once enough brokers have registered, never
// with fewer replicas that would stay under-replicated for good. The
// same holds until this broker's metadata cache lists this broker among
// the live ones (its first UpdateMetadata has not arrived: just started,
// or the controller's channel to it is backed up): the cache does not
// know the cluster yet — judging by it created __consumer_offsets with
// replication factor 1 on a 3-broker cluster (chaos: every partition's
// ISR stuck at one broker, acks=all group writes refused under
// min.insync.replicas=2, the group rebalancing for ever).
//
// Without zookeeper.connect (embedded metadata) the cluster is this one
// broker and can never have more, so the factor is capped at the live
// brokers instead, and so is the topic's min.insync.replicas (else
// transaction.state.log.min.isr=2 would refuse every write of a single
// node): a single node started without the replication factor set
// (default 3, as in Kafka) still serves groups and transactions rather
// than answering COORDINATOR_NOT_AVAILABLE for ever.
func (o *internalTopic) Ensure(ctx context.Context) error {
	snap := o.topics.Snapshot()
	if _, ok := snap.Topics[o.spec.name]; ok {
		return nil
	}
	if _, ok := snap.Broker(o.cfg.BrokerID); !ok {
		return fmt.Errorf("%w: broker %d has no cluster metadata yet to create %s with", kerr.CoordinatorNotAvailable, o.cfg.BrokerID, o.spec.name)
	}
	rf, minIsr := o.spec.rf, o.spec.minIsr
	if live := len(snap.Brokers); int(rf) > live {
		if o.cfg.ZookeeperConnect != "" {
			return fmt.Errorf("%w: %d live brokers do not meet %s=%d for %s (retriable while the cluster is starting)",
				kerr.CoordinatorNotAvailable, live, o.spec.rfKey, rf, o.spec.name)
		}
		rf = int16(live)
	}
	if o.cfg.ZookeeperConnect == "" && minIsr > int(rf) {
		minIsr = int(rf)
	}
	configs := make(map[string]string, len(o.spec.configs)+1)
	for k, v := range o.spec.configs {
		configs[k] = v
	}
	if minIsr > 0 {
		configs["min.insync.replicas"] = fmt.Sprint(minIsr)
	}
	res := o.topics.CreateTopics([]controller.NewTopic{{
		Name:              o.spec.name,
		NumPartitions:     o.spec.partitions,
		ReplicationFactor: rf,
		Configs:           configs,
	}}, false)
	if err := res[0].Err; err != nil {
		if code, _ := controller.Code(err); code == kerr.TopicAlreadyExists.Code {
			return nil
		}
		return err
	}
	return nil
}

// Append writes one batch through the partition actor and returns once the
// high watermark covers it (acks=all), or REQUEST_TIMED_OUT when ctx ends
// first (partition.ProduceWait: not appended if the actor had not
// started it; else appended but not yet replicated to the ISR).
func (o *internalTopic) Append(ctx context.Context, p int32, batch []byte) (int64, error) {
	return o.append(ctx, p, batch, false, 0)
}

// AppendVerified is Append for a TxnOffsetCommit's transactional batch
// (coordinator.VerifiedAppender): with
// transaction.partition.verification.enable the partition appends it only
// if it does not open the producer's transaction there, or guard (from
// the handler's verification) is still the producer's current one; else
// INVALID_TXN_STATE (Kafka's appendForGroup with verificationGuards).
func (o *internalTopic) AppendVerified(ctx context.Context, p int32, batch []byte, guard uint64) (int64, error) {
	return o.append(ctx, p, batch, o.cfg.TransactionPartitionVerificationEnable, guard)
}

func (o *internalTopic) append(ctx context.Context, p int32, batch []byte, verify bool, guard uint64) (int64, error) {
	h, ok := o.replicas.Get(o.tp(p))
	if !ok {
		return -1, kerr.NotLeaderForPartition
	}
	// The coordinator built the batch: only its integrity is checked, not
	// the client rules of record.Validate (Kafka's AppendOrigin.COORDINATOR:
	// a TxnOffsetCommit's transactional batch has no sequence).
	hdr, _, err := record.ValidateIntegrity(batch)
	if err != nil {
		return -1, err
	}
	acks := int16(-1)
	if o.spec.leaderAcks {
		acks = 1
	}
	r := partition.ProduceWait(ctx, h, &partition.Produce{Batch: batch, Header: hdr, Acks: acks, TxnVerify: verify, VerificationGuard: guard})
	if r.Err != nil {
		return -1, r.Err
	}
	return r.BaseOffset, nil
}

// Load reads every record of partition p from its log start offset up to its
// log end offset, in offset order, transaction markers included (the group
// loader needs them to end the transactions of TxnOffsetCommit records).
// Like Kafka's GroupMetadataManager it reads past the high watermark: a
// follower just elected leader may not have learnt the old leader's last
// high watermark yet, and the records it holds are the ones it keeps as
// leader.
func (o *internalTopic) Load(ctx context.Context, p int32, fn func(r *coordinator.LogRecord) error) error {
	h, ok := o.replicas.Get(o.tp(p))
	if !ok {
		return kerr.NotLeaderForPartition
	}
	v := h.View()
	if v.Err != nil {
		return v.Err
	}
	if v.Log == nil {
		return kerr.NotLeaderForPartition
	}
	chunk := int64(o.spec.loadBuffer)
	if chunk <= 0 {
		chunk = 5 << 20 // Kafka's default load buffer
	}
	end := v.Log.LogEndOffset()
	for off := v.Log.LogStartOffset(); off < end; {
		if err := ctx.Err(); err != nil {
			return err
		}
		fd, err := v.Log.Read(off, chunk, end)
		if err != nil {
			return fmt.Errorf("reading %s at %d: %w", o.tp(p), off, err)
		}
		next, err := eachLogRecord(fd, off, fn)
		fd.Release()
		if err != nil {
			return err
		}
		if next <= off { // no progress: nothing more below the end
			break
		}
		off = next
	}
	return nil
}

// eachLogRecord decodes the batches of fd and calls fn for records at or
// after from, control batches included, each with its batch's producer and
// attributes; it returns the offset after the last batch.
func eachLogRecord(fd storage.FetchData, from int64, fn func(r *coordinator.LogRecord) error) (int64, error) {
	next := from
	for _, r := range fd.Regions {
		buf := make([]byte, r.Len)
		if _, err := r.File.ReadAt(buf, r.Pos); err != nil && err != io.EOF {
			return next, err
		}
		for len(buf) >= record.HeaderSize {
			h, batch, err := record.ValidateIntegrity(buf)
			if err != nil {
				return next, err
			}
			err = record.Records(h, batch, 64<<20, func(rec *record.Record) error {
				off := rec.Offset(&h)
				if off < from {
					return nil
				}
				return fn(&coordinator.LogRecord{Key: rec.Key, Value: rec.Value, Offset: off, BatchOffset: h.BaseOffset,
					ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, Transactional: h.IsTransactional(), Control: h.IsControl()})
			})
			if err != nil {
				return next, err
			}
			next = h.NextOffset()
			buf = buf[len(batch):]
		}
	}
	return next, nil
}

// IsLocalLeader reports whether this broker leads partition p.
func (o *internalTopic) IsLocalLeader(p int32) bool {
	h, ok := o.replicas.Get(o.tp(p))
	return ok && h.View().IsLeader()
}

// Leader is partition p's leader and its advertised PLAINTEXT endpoint.
func (o *internalTopic) Leader(p int32) (int32, string, int32, bool) {
	snap := o.topics.Snapshot()
	part, ok := snap.Partition(o.spec.name, p)
	if !ok || part.Leader < 0 {
		return -1, "", 0, false
	}
	b, ok := snap.Broker(part.Leader)
	if !ok {
		return -1, "", 0, false
	}
	return b.ID, b.Host, b.Port, true
}
