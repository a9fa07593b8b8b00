package handlers

import (
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
)

// fakeVerifier answers every partition with code, after running before
// (if set) on its own goroutine, as a coordinator's answer arrives.
type fakeVerifier struct {
	mu     sync.Mutex
	calls  int
	code   int16
	before func()
}

func (f *fakeVerifier) Verify(_ string, _ int64, _ int16, parts map[string][]int32, reply func(map[string]map[int32]int16)) {
	f.mu.Lock()
	f.calls++
	code, before := f.code, f.before
	f.mu.Unlock()
	out := map[string]map[int32]int16{}
	for topic, ps := range parts {
		out[topic] = map[int32]int16{}
		for _, p := range ps {
			out[topic][p] = code
		}
	}
	go func() {
		if before != nil {
			before()
		}
		reply(out)
	}()
}

func (f *fakeVerifier) set(code int16, before func()) {
	f.mu.Lock()
	f.code, f.before = code, before
	f.mu.Unlock()
}

func (f *fakeVerifier) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (e *dataEnv) txnProduceV(version int16, tid string, tp storage.TopicPartition, records []byte) kmsg.ProduceResponseTopicPartition {
	e.t.Helper()
	req := produceReq(-1, tp, records)
	req.TransactionID = &tid
	return e.call(0, version, req).Msg.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

func msgOf(p kmsg.ProduceResponseTopicPartition) string {
	if p.ErrorMessage == nil {
		return ""
	}
	return *p.ErrorMessage
}

// TestProduceVerificationErrors: the coordinator's answers become Kafka's
// produce errors, and nothing is appended for any of them.
func TestProduceVerificationErrors(t *testing.T) {
	tp := storage.TopicPartition{Topic: "v", Partition: 0}
	e := newDataEnv(t, storage.DefaultLogConfig(), tp)
	f := &fakeVerifier{}
	e.b.TxnVerifier = f
	const retriable = "Unable to verify the partition has been added to the transaction. Underlying error: "
	cases := []struct {
		code    int16
		version int16
		want    *kerr.Error
		msg     string
	}{
		{kerr.TransactionAbortable.Code, 9, kerr.InvalidTxnState, "Partition was not added to the transaction"},
		{kerr.TransactionAbortable.Code, 11, kerr.TransactionAbortable, ""},
		{kerr.InvalidTxnState.Code, 11, kerr.InvalidTxnState, "Partition was not added to the transaction"},
		{kerr.CoordinatorNotAvailable.Code, 9, kerr.NotEnoughReplicas, retriable + "COORDINATOR_NOT_AVAILABLE"},
		{kerr.NotCoordinator.Code, 9, kerr.NotEnoughReplicas, retriable + "NOT_COORDINATOR"},
		{kerr.ConcurrentTransactions.Code, 9, kerr.NotEnoughReplicas, retriable + "CONCURRENT_TRANSACTIONS"},
		{kerr.NetworkException.Code, 9, kerr.NotEnoughReplicas, retriable + "NETWORK_EXCEPTION"},
		{kerr.CoordinatorLoadInProgress.Code, 9, kerr.NotEnoughReplicas, retriable + "COORDINATOR_LOAD_IN_PROGRESS"},
		{kerr.InvalidProducerEpoch.Code, 9, kerr.InvalidProducerEpoch, ""},
	}
	for _, tc := range cases {
		f.set(tc.code, nil)
		got := e.txnProduceV(tc.version, "tx", tp, txnBatch(t, 7, 0, 0, 1))
		if got.ErrorCode != tc.want.Code || msgOf(got) != tc.msg || got.BaseOffset != -1 {
			t.Errorf("coordinator %v at v%d: %v %q at %d, want %v %q", kerr.ErrorForCode(tc.code), tc.version,
				kerr.ErrorForCode(got.ErrorCode), msgOf(got), got.BaseOffset, tc.want, tc.msg)
		}
	}
	if n := e.listLatest(tp, 0); n != 0 {
		t.Fatalf("refused batches appended: log end %d", n)
	}
}

// TestProduceVerifiedOnceThenOngoing: a verified batch is appended; the
// next batch of the ongoing transaction is not verified again; a request
// carrying two transactional producers is refused on every partition
// without asking anyone.
func TestProduceVerifiedOnceThenOngoing(t *testing.T) {
	tp0, tp1 := storage.TopicPartition{Topic: "v", Partition: 0}, storage.TopicPartition{Topic: "v", Partition: 1}
	e := newDataEnv(t, storage.DefaultLogConfig(), tp0, tp1)
	f := &fakeVerifier{}
	e.b.TxnVerifier = f
	if got := e.txnProduceV(9, "tx", tp0, txnBatch(t, 7, 0, 0, 2)); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("verified batch: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	if got := e.txnProduceV(9, "tx", tp0, txnBatch(t, 7, 0, 2, 1)); got.ErrorCode != 0 || got.BaseOffset != 2 {
		t.Fatalf("second batch: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	if n := f.count(); n != 1 {
		t.Fatalf("%d verifications, want 1 (the second batch's transaction is ongoing)", n)
	}

	req := produceReq(-1, tp0, txnBatch(t, 8, 0, 0, 1))
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = tp1.Topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = tp1.Partition, txnBatch(t, 9, 0, 0, 1)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	tid := "tx"
	req.TransactionID = &tid
	resp := e.call(0, 9, req).Msg.(*kmsg.ProduceResponse)
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if p.ErrorCode != kerr.InvalidProducerIDMapping.Code {
				t.Fatalf("two producers in one request: %s-%d %v, want INVALID_PRODUCER_ID_MAPPING", rt.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
	}
	if n := f.count(); n != 1 {
		t.Fatalf("the refused request was verified (%d calls)", n)
	}
}

// TestProduceVerificationRacesMarker: the coordinator verified the
// partition, but a marker for the producer lands before the batch is sent
// back to the partition: the guard is void, the batch is refused and no
// transaction is opened (the last stable offset stays at the high
// watermark).
func TestProduceVerificationRacesMarker(t *testing.T) {
	tp := storage.TopicPartition{Topic: "v", Partition: 0}
	e := newDataEnv(t, storage.DefaultLogConfig(), tp)
	f := &fakeVerifier{}
	e.b.TxnVerifier = f
	f.set(0, func() {
		if code := e.marker(7, 0, false, 0, tp); code != 0 {
			t.Errorf("marker: %v", kerr.ErrorForCode(code))
		}
	})
	got := e.txnProduceV(9, "tx", tp, txnBatch(t, 7, 0, 0, 1))
	if got.ErrorCode != kerr.InvalidTxnState.Code || msgOf(got) != "Record was not part of an ongoing transaction" {
		t.Fatalf("batch verified before a marker: %v %q at %d, want INVALID_TXN_STATE", kerr.ErrorForCode(got.ErrorCode), msgOf(got), got.BaseOffset)
	}
	if lso, hw := e.listLatest(tp, 1), e.listLatest(tp, 0); lso != 1 || hw != 1 {
		t.Fatalf("lso %d hw %d, want 1 and 1 (only the marker)", lso, hw)
	}
}
