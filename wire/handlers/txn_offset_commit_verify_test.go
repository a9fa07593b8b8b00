package handlers

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors/coordinator"
	"gregor/storage"
)

// TestTxnOffsetCommitVerificationCodes: with a verifier, a TxnOffsetCommit
// is verified on its group's __consumer_offsets partition (hosted here,
// a real partition actor) before the group sees it, and the
// coordinator's answer becomes Kafka's TxnOffsetCommit code on every
// partition (TRANSACTION_ABORTABLE only from v4, NETWORK_EXCEPTION as
// COORDINATOR_LOAD_IN_PROGRESS, or COORDINATOR_NOT_AVAILABLE below v2,
// NOT_ENOUGH_REPLICAS as COORDINATOR_NOT_AVAILABLE), with nothing staged;
// a verified one is staged. A group whose partition is not hosted here is
// NOT_COORDINATOR without asking the verifier.
func TestTxnOffsetCommitVerificationCodes(t *testing.T) {
	const group = "vg"
	gb, _ := groupBroker(t) // 50 __consumer_offsets partitions
	tp := storage.TopicPartition{Topic: coordinator.OffsetsTopicName, Partition: coordinator.PartitionFor(group, 50)}
	e := newDataEnv(t, storage.DefaultLogConfig(), tp)
	e.b.Groups = gb.Groups
	f := &fakeVerifier{}
	e.b.TxnVerifier = f
	commit := func(v int16, group string) []int16 {
		t.Helper()
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "tx", group, 7, 0, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "in"
		for p := int32(0); p < 2; p++ {
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, 5, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp := e.call(28, v, req).Msg.(*kmsg.TxnOffsetCommitResponse)
		var codes []int16
		for _, p := range resp.Topics[0].Partitions {
			codes = append(codes, p.ErrorCode)
		}
		return codes
	}
	stable := func() int16 {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group, req.RequireStable = group, true
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "in", []int32{0}
		req.Topics = append(req.Topics, rt)
		return e.call(9, 7, req).Msg.(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0].ErrorCode
	}
	cases := []struct {
		code    int16
		version int16
		want    *kerr.Error
	}{
		{kerr.TransactionAbortable.Code, 3, kerr.InvalidTxnState},
		{kerr.TransactionAbortable.Code, 4, kerr.TransactionAbortable},
		{kerr.NetworkException.Code, 2, kerr.CoordinatorLoadInProgress},
		{kerr.NetworkException.Code, 1, kerr.CoordinatorNotAvailable},
		{kerr.NotEnoughReplicas.Code, 4, kerr.CoordinatorNotAvailable},
		{kerr.InvalidProducerEpoch.Code, 4, kerr.InvalidProducerEpoch},
		{kerr.ConcurrentTransactions.Code, 4, kerr.ConcurrentTransactions},
		{kerr.CoordinatorNotAvailable.Code, 4, kerr.CoordinatorNotAvailable},
	}
	for _, tc := range cases {
		f.set(tc.code, nil)
		got := commit(tc.version, group)
		if len(got) != 2 || got[0] != tc.want.Code || got[1] != tc.want.Code {
			t.Errorf("coordinator %v at v%d: %v, want %v on both partitions", kerr.ErrorForCode(tc.code), tc.version, got, tc.want)
		}
	}
	if n := f.count(); n != len(cases) {
		t.Fatalf("verifier asked %d times, want %d", n, len(cases))
	}
	if code := stable(); code != 0 {
		t.Fatalf("refused commits staged offsets: require_stable %v", kerr.ErrorForCode(code))
	}

	f.set(0, nil)
	if got := commit(4, group); got[0] != 0 || got[1] != 0 {
		t.Fatalf("verified commit: %v", got)
	}
	if code := stable(); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("verified commit not staged: require_stable %v", kerr.ErrorForCode(code))
	}

	// A group of a partition not hosted here (another name's partition).
	other := "other"
	for coordinator.PartitionFor(other, 50) == tp.Partition {
		other += "x"
	}
	before := f.count()
	if got := commit(4, other); got[0] != kerr.NotCoordinator.Code {
		t.Fatalf("group not coordinated here: %v, want NOT_COORDINATOR", got)
	}
	if f.count() != before {
		t.Fatal("the verifier was asked for a group not coordinated here")
	}
}
