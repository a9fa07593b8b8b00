package handlers

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
	"gregor/replication/metadata"
)

// fakeTxns is a TxnSource answering every call with fixed codes and
// recording what it was asked.
type fakeTxns struct {
	code     int16                      // AddPartitions, EndTxn, InitProducerID
	verify   map[string]map[int32]int16 // VerifyPartitions
	added    []map[string][]int32       // AddPartitions calls
	verified []string                   // VerifyPartitions ids
	init     [][2]int64                 // InitProducerID producer id/epoch
	ended    []bool                     // EndTxn commits
	found    int                        // FindCoordinator calls
}

func (f *fakeTxns) FindCoordinator(_ context.Context, req *kmsg.FindCoordinatorRequest, reply func(*kmsg.FindCoordinatorResponse)) {
	f.found++
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.NodeID, resp.Host, resp.Port = 9, "txn-host", 1234
	reply(resp)
}

func (f *fakeTxns) InitProducerID(_ string, _ int32, pid int64, epoch int16, reply func(int64, int16, int16)) {
	f.init = append(f.init, [2]int64{pid, int64(epoch)})
	if f.code != 0 {
		reply(-1, -1, f.code)
		return
	}
	reply(77, 3, 0)
}

func (f *fakeTxns) AddPartitions(_ string, _ int64, _ int16, parts map[string][]int32, reply func(int16)) {
	f.added = append(f.added, parts)
	reply(f.code)
}

func (f *fakeTxns) VerifyPartitions(id string, _ int64, _ int16, _ map[string][]int32, reply func(map[string]map[int32]int16)) {
	f.verified = append(f.verified, id)
	reply(f.verify)
}

func (f *fakeTxns) EndTxn(_ string, _ int64, _ int16, commit bool, reply func(int16)) {
	f.ended = append(f.ended, commit)
	reply(f.code)
}

func (f *fakeTxns) GroupPartition(group string) int32 { return int32(len(group)) }

func (f *fakeTxns) DescribeTransaction(id string, reply func(kmsg.DescribeTransactionsResponseTransactionState)) {
	s := kmsg.NewDescribeTransactionsResponseTransactionState()
	s.TransactionalID, s.State = id, "Ongoing"
	reply(s)
}

func (f *fakeTxns) ListTransactions(states []string, _ []int64, duration int64, reply func(int16, []string, []kmsg.ListTransactionsResponseTransactionState)) {
	s := kmsg.NewListTransactionsResponseTransactionState()
	s.TransactionalID, s.ProducerID = "listed", duration
	reply(0, states, []kmsg.ListTransactionsResponseTransactionState{s})
}

func txnBroker(t *testing.T, f *fakeTxns) *Broker {
	t.Helper()
	b := &Broker{Config: config.Defaults(), Txns: f, Topics: snapshotTopics{s: &metadata.Snapshot{ControllerID: 1, Topics: map[string]*metadata.Topic{
		"out": {Name: "out", Partitions: []metadata.Partition{{Partition: 0, Leader: 1}, {Partition: 1, Leader: 1}}},
	}}}}
	t.Cleanup(b.Close)
	return b
}

// TestTxnHandlersMapProducerFenced: PRODUCER_FENCED from the coordinator
// reaches clients older than its introduction as INVALID_PRODUCER_EPOCH
// (InitProducerId below v4; AddPartitionsToTxn, AddOffsetsToTxn and EndTxn
// below v2), as KafkaApis does.
func TestTxnHandlersMapProducerFenced(t *testing.T) {
	f := &fakeTxns{code: kerr.ProducerFenced.Code}
	b := txnBroker(t, f)
	want := func(v, since int16) int16 {
		if v < since {
			return kerr.InvalidProducerEpoch.Code
		}
		return kerr.ProducerFenced.Code
	}
	id := "tx"
	for v := int16(0); v <= 5; v++ {
		r := kmsg.NewPtrInitProducerIDRequest()
		r.Version, r.TransactionalID, r.TransactionTimeoutMillis = v, &id, 1000
		if got := wireCall[*kmsg.InitProducerIDResponse](t, b, r); got.ErrorCode != want(v, 4) || got.ProducerID != -1 {
			t.Errorf("InitProducerId v%d: %v", v, kerr.ErrorForCode(got.ErrorCode))
		}
	}
	for v := int16(0); v <= 4; v++ {
		e := kmsg.NewPtrEndTxnRequest()
		e.Version, e.TransactionalID = v, id
		if got := wireCall[*kmsg.EndTxnResponse](t, b, e); got.ErrorCode != want(v, 2) {
			t.Errorf("EndTxn v%d: %v", v, kerr.ErrorForCode(got.ErrorCode))
		}
		o := kmsg.NewPtrAddOffsetsToTxnRequest()
		o.Version, o.TransactionalID, o.Group = v, id, "grp"
		if got := wireCall[*kmsg.AddOffsetsToTxnResponse](t, b, o); got.ErrorCode != want(v, 2) {
			t.Errorf("AddOffsetsToTxn v%d: %v", v, kerr.ErrorForCode(got.ErrorCode))
		}
	}
	for v := int16(0); v <= 3; v++ {
		a := kmsg.NewPtrAddPartitionsToTxnRequest()
		a.Version, a.TransactionalID = v, id
		at := kmsg.NewAddPartitionsToTxnRequestTopic()
		at.Topic, at.Partitions = "out", []int32{0, 1}
		a.Topics = append(a.Topics, at)
		got := wireCall[*kmsg.AddPartitionsToTxnResponse](t, b, a)
		if len(got.Topics) != 1 || len(got.Topics[0].Partitions) != 2 || got.Topics[0].Partitions[1].ErrorCode != want(v, 2) {
			t.Errorf("AddPartitionsToTxn v%d: %+v", v, got.Topics)
		}
	}
	// AddOffsetsToTxn adds the group's __consumer_offsets partition.
	// (the first five AddPartitions calls are the AddOffsetsToTxn ones).
	for _, added := range f.added[:5] {
		if ps := added["__consumer_offsets"]; len(added) != 1 || len(ps) != 1 || ps[0] != 3 {
			t.Errorf("AddOffsetsToTxn added %v, want __consumer_offsets-3", added)
		}
	}
	if f.init[0] != [2]int64{-1, -1} {
		t.Errorf("InitProducerId v0 passed producer %v", f.init[0])
	}
}

// TestInitProducerIDTransactionalChecks: v3+ with only one of producer id
// and epoch is INVALID_REQUEST before the coordinator is asked; the
// coordinator's id and epoch are answered.
func TestInitProducerIDTransactionalChecks(t *testing.T) {
	f := &fakeTxns{}
	b := txnBroker(t, f)
	id := "tx"
	r := kmsg.NewPtrInitProducerIDRequest()
	r.Version, r.TransactionalID, r.ProducerID, r.ProducerEpoch = 4, &id, 5, -1
	if got := wireCall[*kmsg.InitProducerIDResponse](t, b, r); got.ErrorCode != kerr.InvalidRequest.Code || len(f.init) != 0 {
		t.Fatalf("half a producer: %v, coordinator asked %d times", kerr.ErrorForCode(got.ErrorCode), len(f.init))
	}
	r.ProducerEpoch = 2
	if got := wireCall[*kmsg.InitProducerIDResponse](t, b, r); got.ErrorCode != 0 || got.ProducerID != 77 || got.ProducerEpoch != 3 || f.init[0] != [2]int64{5, 2} {
		t.Fatalf("init %+v asked %v", got, f.init)
	}
	// Without a coordinator: TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as before.
	b.Txns = nil
	if got := wireCall[*kmsg.InitProducerIDResponse](t, b, r); got.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("no coordinator: %v", kerr.ErrorForCode(got.ErrorCode))
	}
}

// TestAddPartitionsToTxnMissingAndBatched: a missing partition fails its
// whole transaction without asking the coordinator (UNKNOWN_TOPIC_OR_PARTITION
// for it, OPERATION_NOT_ATTEMPTED for the others); v4+ answers each
// transaction of a batch, VerifyOnly through VerifyPartitions.
func TestAddPartitionsToTxnMissingAndBatched(t *testing.T) {
	f := &fakeTxns{verify: map[string]map[int32]int16{"out": {0: 0, 1: kerr.TransactionAbortable.Code}}}
	b := txnBroker(t, f)
	a := kmsg.NewPtrAddPartitionsToTxnRequest()
	a.Version = 4
	txn := func(id string, verify bool, topic string, ps ...int32) {
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.VerifyOnly = id, verify
		tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		tt.Topic, tt.Partitions = topic, ps
		tx.Topics = append(tx.Topics, tt)
		a.Transactions = append(a.Transactions, tx)
	}
	txn("missing", false, "out", 0, 9)
	txn("added", false, "out", 1)
	txn("verified", true, "out", 0, 1)
	got := wireCall[*kmsg.AddPartitionsToTxnResponse](t, b, a)
	if len(got.Transactions) != 3 {
		t.Fatalf("results %+v", got.Transactions)
	}
	codes := map[string]map[int32]int16{}
	for _, r := range got.Transactions {
		codes[r.TransactionalID] = map[int32]int16{}
		for _, p := range r.Topics[0].Partitions {
			codes[r.TransactionalID][p.Partition] = p.ErrorCode
		}
	}
	if c := codes["missing"]; c[0] != kerr.OperationNotAttempted.Code || c[9] != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("missing: %v", c)
	}
	if c := codes["added"]; c[1] != 0 {
		t.Errorf("added: %v", c)
	}
	if c := codes["verified"]; c[0] != 0 || c[1] != kerr.TransactionAbortable.Code {
		t.Errorf("verified: %v", c)
	}
	if len(f.added) != 1 || len(f.verified) != 1 || f.verified[0] != "verified" {
		t.Errorf("coordinator asked: added %v verified %v", f.added, f.verified)
	}
}

// TestFindCoordinatorRoutesTransactions: key type 1 goes to the transaction
// coordinator; key type 0 does not.
func TestFindCoordinatorRoutesTransactions(t *testing.T) {
	f := &fakeTxns{}
	b := txnBroker(t, f)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorType, fc.CoordinatorKey = 3, 1, "tx"
	if got := wireCall[*kmsg.FindCoordinatorResponse](t, b, fc); got.NodeID != 9 || got.Host != "txn-host" || f.found != 1 {
		t.Fatalf("type 1: %+v", got)
	}
	fc.CoordinatorType = 0
	if got := wireCall[*kmsg.FindCoordinatorResponse](t, b, fc); got.ErrorCode != kerr.CoordinatorNotAvailable.Code || f.found != 1 {
		t.Fatalf("type 0 without a group coordinator: %+v", got)
	}
}

// TestDescribeAndListTransactions: DescribeTransactions answers every id
// in request order; ListTransactions passes DurationFilterMillis only from
// v1 (v0: -1, no filter).
func TestDescribeAndListTransactions(t *testing.T) {
	b := txnBroker(t, &fakeTxns{})
	d := kmsg.NewPtrDescribeTransactionsRequest()
	d.TransactionalIDs = []string{"x", "y"}
	got := wireCall[*kmsg.DescribeTransactionsResponse](t, b, d)
	if len(got.TransactionStates) != 2 || got.TransactionStates[0].TransactionalID != "x" || got.TransactionStates[1].TransactionalID != "y" || got.TransactionStates[1].State != "Ongoing" {
		t.Fatalf("describe %+v", got.TransactionStates)
	}
	for v, want := range map[int16]int64{0: -1, 1: 5000} {
		l := kmsg.NewPtrListTransactionsRequest()
		l.Version, l.DurationFilterMillis, l.StateFilters = v, 5000, []string{"Bogus"}
		lr := wireCall[*kmsg.ListTransactionsResponse](t, b, l)
		if len(lr.TransactionStates) != 1 || lr.TransactionStates[0].ProducerID != want || len(lr.UnknownStateFilters) != 1 {
			t.Errorf("list v%d: %+v", v, lr)
		}
	}
}
