package integration

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"gregor/storage/record"
	"gregor/test/harness"
)

// txnRaw drives one transactional id with raw requests against a broker
// process, as a transactional producer would, with Produce pinned to a
// version (the verification's error depends on it).
type txnRaw struct {
	t          *testing.T
	ctx        context.Context
	b          *harness.Broker
	id         string
	pid        int64
	epoch      int16
	byVersion  map[int16]*kgo.Client
	defaultCl  *kgo.Client
	topic      string
	nextSeq    map[int32]int32
	lastResult kmsg.ProduceResponseTopicPartition
}

func newTxnRaw(t *testing.T, ctx context.Context, b *harness.Broker, id, topic string) *txnRaw {
	r := &txnRaw{t: t, ctx: ctx, b: b, id: id, topic: topic, byVersion: map[int16]*kgo.Client{}, nextSeq: map[int32]int32{},
		defaultCl: b.Client(kgo.RetryTimeout(20 * time.Second))}
	// InitProducerId creates __transaction_state on first use: retry the
	// codes a producer retries, bounded.
	deadline := time.Now().Add(30 * time.Second)
	for {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = &id, 60000
		resp, err := req.RequestWith(ctx, r.defaultCl)
		if err != nil {
			t.Fatalf("InitProducerId: %v", err)
		}
		if resp.ErrorCode == 0 {
			r.pid, r.epoch = resp.ProducerID, resp.ProducerEpoch
			return r
		}
		if ke := kerr.ErrorForCode(resp.ErrorCode); !kerr.IsRetriable(ke) && ke != kerr.ConcurrentTransactions || time.Now().After(deadline) {
			t.Fatalf("InitProducerId: %v", ke)
		}
		time.Sleep(50 * time.Millisecond) // the client's retry backoff
	}
}

// client is a client whose Produce goes out at version v.
func (r *txnRaw) client(v int16) *kgo.Client {
	if cl := r.byVersion[v]; cl != nil {
		return cl
	}
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(0, v)
	cl := r.b.Client(kgo.MaxVersions(vs))
	r.byVersion[v] = cl
	return cl
}

// produce sends one transactional batch of n records to partition p with
// the next sequence (advanced only when appended) and returns the
// partition's response.
func (r *txnRaw) produce(v int16, p int32, n int) kmsg.ProduceResponseTopicPartition {
	r.t.Helper()
	recs := make([]record.BatchRecord, n)
	for i := range recs {
		recs[i] = record.BatchRecord{Value: []byte("v"), TimestampDelta: int64(i)}
	}
	batch, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli(), Transactional: true,
		Producer: &record.Producer{ID: r.pid, Epoch: r.epoch, BaseSequence: r.nextSeq[p]}}, recs)
	if err != nil {
		r.t.Fatal(err)
	}
	req := harness.ProduceRequest(r.topic, p, batch, -1, 10*time.Second)
	req.TransactionID = &r.id
	resp, err := req.RequestWith(r.ctx, r.client(v))
	if err != nil {
		r.t.Fatalf("produce: %v", err)
	}
	if resp.Version != v {
		r.t.Fatalf("produce went out at v%d, want v%d", resp.Version, v)
	}
	out := resp.Topics[0].Partitions[0]
	if out.ErrorCode == 0 {
		r.nextSeq[p] += int32(n)
	}
	return out
}

func (r *txnRaw) addPartitions(ps ...int32) {
	r.t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = r.id, r.pid, r.epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = r.topic, ps
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(r.ctx, r.defaultCl)
	if err != nil {
		r.t.Fatalf("AddPartitionsToTxn: %v", err)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 {
			r.t.Fatalf("AddPartitionsToTxn partition %d: %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
		}
	}
}

// abort ends the transaction with EndTxn(abort) and waits (bounded) until
// DescribeTransactions shows it CompleteAbort: every marker is written.
func (r *txnRaw) abort() {
	r.t.Helper()
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = r.id, r.pid, r.epoch, false
	resp, err := req.RequestWith(r.ctx, r.defaultCl)
	if err != nil || resp.ErrorCode != 0 {
		r.t.Fatalf("EndTxn: %v %+v", err, resp)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		d := kmsg.NewPtrDescribeTransactionsRequest()
		d.TransactionalIDs = []string{r.id}
		dr, err := d.RequestWith(r.ctx, r.defaultCl)
		if err != nil {
			r.t.Fatalf("DescribeTransactions: %v", err)
		}
		if s := dr.TransactionStates[0]; s.ErrorCode == 0 && s.State == "CompleteAbort" {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("transaction not complete: %+v", dr.TransactionStates)
		}
		time.Sleep(20 * time.Millisecond) // the markers are sent asynchronously: no event to await from outside
	}
}

// offsets returns partition p's latest offset read_committed (the last
// stable offset) and read_uncommitted (the high watermark).
func (r *txnRaw) offsets(p int32) (lso, hw int64) {
	r.t.Helper()
	get := func(iso int8) int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID, req.IsolationLevel = -1, iso
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = r.topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(r.ctx, r.defaultCl)
		if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			r.t.Fatalf("ListOffsets: %v %+v", err, resp)
		}
		return resp.Topics[0].Partitions[0].Offset
	}
	return get(1), get(0)
}

func wantProduceErr(t *testing.T, what string, got kmsg.ProduceResponseTopicPartition, want *kerr.Error, msg string) {
	t.Helper()
	if got.ErrorCode != want.Code {
		t.Fatalf("%s: %v, want %v", what, kerr.ErrorForCode(got.ErrorCode), want)
	}
	if msg != "" && (got.ErrorMessage == nil || *got.ErrorMessage != msg) {
		t.Fatalf("%s: message %v, want %q", what, got.ErrorMessage, msg)
	}
	if got.BaseOffset != -1 {
		t.Fatalf("%s: base offset %d on an error", what, got.BaseOffset)
	}
}

// TestTxnVerificationOnProduce is KIP-890 part 1 against a broker process
// with raw requests: a transactional batch for a partition never added
// with AddPartitionsToTxn is refused (INVALID_TXN_STATE with Kafka's
// message below Produce v11, TRANSACTION_ABORTABLE from v11) and nothing
// is written; once added it is appended, and so are the following batches;
// after the transaction's abort marker a late batch of that transaction is
// refused instead of opening a hanging transaction, so the last stable
// offset reaches the high watermark.
func TestTxnVerificationOnProduce(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"transaction.state.log.num.partitions": "2"})
	createTopic(t, b, "tv", 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := newTxnRaw(t, ctx, b, "tv-txn", "tv")

	wantProduceErr(t, "v9 produce to a partition not added", r.produce(9, 0, 2), kerr.InvalidTxnState, "Partition was not added to the transaction")
	wantProduceErr(t, "v11 produce to a partition not added", r.produce(11, 0, 2), kerr.TransactionAbortable, "")
	if lso, hw := r.offsets(0); lso != 0 || hw != 0 {
		t.Fatalf("refused batches were written: lso %d hw %d", lso, hw)
	}

	r.addPartitions(0)
	if got := r.produce(9, 0, 2); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("produce after AddPartitionsToTxn: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	if got := r.produce(11, 0, 1); got.ErrorCode != 0 || got.BaseOffset != 2 {
		t.Fatalf("next batch of the transaction: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	// The other partition was not added: still refused mid-transaction.
	wantProduceErr(t, "produce to the partition not added, transaction ongoing", r.produce(9, 1, 1), kerr.InvalidTxnState, "")
	if lso, hw := r.offsets(0); lso != 0 || hw != 3 {
		t.Fatalf("open transaction: lso %d hw %d, want 0 and 3", lso, hw)
	}

	r.abort() // marker at 3
	if lso, hw := r.offsets(0); lso != 4 || hw != 4 {
		t.Fatalf("after the abort: lso %d hw %d, want 4 and 4", lso, hw)
	}
	// A late batch of the aborted transaction (a retry stuck in the
	// network, same epoch, next sequence): refused.
	wantProduceErr(t, "late batch after the abort marker", r.produce(9, 0, 1), kerr.InvalidTxnState, "Partition was not added to the transaction")
	if lso, hw := r.offsets(0); lso != 4 || hw != 4 {
		t.Fatalf("after the late batch: lso %d hw %d, want 4 and 4 (no hanging transaction)", lso, hw)
	}
}

// TestTxnVerificationDisabled: with
// transaction.partition.verification.enable=false the broker appends as
// Kafka before 3.6 does: a batch for a partition never added is taken, and
// a late batch after the abort marker opens a transaction the coordinator
// knows nothing of, holding the last stable offset back (the hanging
// transaction KIP-890 prevents).
func TestTxnVerificationDisabled(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"transaction.state.log.num.partitions": "2", "transaction.partition.verification.enable": "false"})
	createTopic(t, b, "tv", 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := newTxnRaw(t, ctx, b, "tv-off", "tv")

	if got := r.produce(9, 1, 1); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("unverified produce to a partition not added: %v at %d, want appended at 0", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	r.addPartitions(0, 1)
	if got := r.produce(9, 0, 2); got.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	r.abort() // marker at 2
	if got := r.produce(9, 0, 1); got.ErrorCode != 0 || got.BaseOffset != 3 {
		t.Fatalf("late batch: %v at %d, want appended at 3", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	if lso, hw := r.offsets(0); lso != 3 || hw != 4 {
		t.Fatalf("hanging transaction: lso %d hw %d, want 3 and 4", lso, hw)
	}
}

// txnOffsetCommit sends a TxnOffsetCommit of offset off for topic
// partition 0 in group at the client's highest version and returns its
// code, retrying (bounded) what a producer retries while the group's
// coordinator comes up.
func (r *txnRaw) txnOffsetCommit(group string, off int64) *kerr.Error {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = r.id, group, r.pid, r.epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = r.topic
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 0, off, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(r.ctx, r.defaultCl)
		if err != nil {
			r.t.Fatalf("TxnOffsetCommit: %v", err)
		}
		if resp.Version != 4 {
			r.t.Fatalf("TxnOffsetCommit went out at v%d, want v4", resp.Version)
		}
		ke := kerr.TypedErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
		switch ke {
		case kerr.CoordinatorLoadInProgress, kerr.CoordinatorNotAvailable, kerr.NotCoordinator:
			if time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond) // the client's retry backoff
				continue
			}
		}
		return ke
	}
}

// TestTxnVerificationOnTxnOffsetCommit is KIP-890 part 1 for the group
// coordinator's transactional writes against a broker process: a
// TxnOffsetCommit of a transaction that never did AddOffsetsToTxn is
// refused TRANSACTION_ABORTABLE (v4) and stages nothing; after
// AddOffsetsToTxn the same commit is accepted and pending
// (require_stable: UNSTABLE_OFFSET_COMMIT) until the transaction ends.
func TestTxnVerificationOnTxnOffsetCommit(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"transaction.state.log.num.partitions": "2", "offsets.topic.num.partitions": "2"})
	createTopic(t, b, "tvo", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := newTxnRaw(t, ctx, b, "tvo-txn", "tvo")
	const group = "tvo-group"
	stable := func() *kerr.Error {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group, req.RequireStable = group, true
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "tvo", []int32{0}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, r.defaultCl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("OffsetFetch: %v %+v", err, resp)
		}
		return kerr.TypedErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}

	if err := r.txnOffsetCommit(group, 5); err != kerr.TransactionAbortable {
		t.Fatalf("commit without AddOffsetsToTxn: %v, want TRANSACTION_ABORTABLE", err)
	}
	if err := stable(); err != nil {
		t.Fatalf("refused commit staged an offset: %v", err)
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = r.id, r.pid, r.epoch, group
	if resp, err := ao.RequestWith(ctx, r.defaultCl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v %+v", err, resp)
	}
	if err := r.txnOffsetCommit(group, 5); err != nil {
		t.Fatalf("commit after AddOffsetsToTxn: %v", err)
	}
	if err := stable(); err != kerr.UnstableOffsetCommit {
		t.Fatalf("accepted commit: require_stable %v, want UNSTABLE_OFFSET_COMMIT", err)
	}
	r.abort()
	if err := stable(); err != nil {
		t.Fatalf("after the abort: require_stable %v, want the pending offset gone", err)
	}
}
