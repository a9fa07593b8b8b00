package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestTxnOffsetCommitVerification is KIP-890 part 1 for TxnOffsetCommit
// (Kafka 3.6+) on a real single node over loopback, with raw requests as a
// transactional producer sends them: a TxnOffsetCommit of a transaction
// that never did AddOffsetsToTxn for the group is refused, with
// TRANSACTION_ABORTABLE at v4 and INVALID_TXN_STATE below (Kafka's
// defaultError operation), and nothing is staged (require_stable sees no
// pending offset); after AddOffsetsToTxn it is accepted and pending, a
// second one in the same transaction too (the transaction is ongoing on
// the partition: nothing to verify); the COMMIT makes the offset visible;
// in the next transaction, without AddOffsetsToTxn, the commit is refused
// again (the marker ended the partition's transaction). The admin
// listener's AddPartitionsToTxnManager metrics count the four
// verifications (the second commit of a transaction needs none) and the
// three refused.
func TestTxnOffsetCommitVerification(t *testing.T) {
	b, cl := startTxnNode(t, map[string]string{"offsets.topic.num.partitions": "3", "group.initial.rebalance.delay.ms": "0",
		"admin.listener": "127.0.0.1:0"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}
	const id, group = "tv-offsets", "tv-group"
	ip := kmsg.NewPtrInitProducerIDRequest()
	txnID := id
	ip.TransactionalID, ip.TransactionTimeoutMillis = &txnID, 60000
	ipr := request(t, cl, ip, func(r *kmsg.InitProducerIDResponse) int16 { return r.ErrorCode })
	if ipr.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v", kerr.ErrorForCode(ipr.ErrorCode))
	}
	pid, epoch := ipr.ProducerID, ipr.ProducerEpoch

	// v3 goes out from a client pinned below TxnOffsetCommit v4.
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(28, 3)
	v3, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()[0].String()), kgo.MaxVersions(vs))
	if err != nil {
		t.Fatal(err)
	}
	defer v3.Close()
	commit := func(c *kgo.Client, off int64) *kmsg.TxnOffsetCommitResponse {
		t.Helper()
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = id, group, pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "in"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 0, off, -1
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		return request(t, c, r, func(r *kmsg.TxnOffsetCommitResponse) int16 { return r.Topics[0].Partitions[0].ErrorCode })
	}
	code := func(r *kmsg.TxnOffsetCommitResponse) *kerr.Error {
		return kerr.TypedErrorForCode(r.Topics[0].Partitions[0].ErrorCode)
	}
	fetch := func() (*kerr.Error, int64) {
		t.Helper()
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group, r.RequireStable = 7, group, true
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "in", []int32{0}
		r.Topics = append(r.Topics, rt)
		resp := request(t, cl, r, func(r *kmsg.OffsetFetchResponse) int16 { return r.ErrorCode })
		p := resp.Topics[0].Partitions[0]
		return kerr.TypedErrorForCode(p.ErrorCode), p.Offset
	}
	addOffsets := func() {
		t.Helper()
		r := kmsg.NewPtrAddOffsetsToTxnRequest()
		r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Group = id, pid, epoch, group
		if resp := request(t, cl, r, func(r *kmsg.AddOffsetsToTxnResponse) int16 { return r.ErrorCode }); resp.ErrorCode != 0 {
			t.Fatalf("AddOffsetsToTxn: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
	}

	if r := commit(cl, 10); r.Version != 4 || code(r) != kerr.TransactionAbortable {
		t.Fatalf("v%d commit without AddOffsetsToTxn: %v, want TRANSACTION_ABORTABLE at v4", r.Version, code(r))
	}
	if r := commit(v3, 10); r.Version != 3 || code(r) != kerr.InvalidTxnState {
		t.Fatalf("v%d commit without AddOffsetsToTxn: %v, want INVALID_TXN_STATE at v3", r.Version, code(r))
	}
	if err, off := fetch(); err != nil || off != -1 {
		t.Fatalf("after refused commits: %v offset %d, want nothing staged or committed", err, off)
	}

	addOffsets()
	if r := commit(cl, 20); code(r) != nil {
		t.Fatalf("commit after AddOffsetsToTxn: %v", code(r))
	}
	if err, _ := fetch(); err != kerr.UnstableOffsetCommit {
		t.Fatalf("staged offset: %v, want UNSTABLE_OFFSET_COMMIT", err)
	}
	if r := commit(v3, 21); code(r) != nil {
		t.Fatalf("second commit of the transaction: %v", code(r))
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, true
	if r := request(t, cl, end, func(r *kmsg.EndTxnResponse) int16 { return r.ErrorCode }); r.ErrorCode != 0 {
		t.Fatalf("EndTxn: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	// The COMMIT marker is written asynchronously by the coordinator's
	// marker sender: poll, bounded, for the committed offset.
	deadline := time.Now().Add(20 * time.Second)
	for {
		err, off := fetch()
		if err == nil && off == 21 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after COMMIT: %v offset %d, want 21", err, off)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The offset is visible once its marker is written, before the
	// coordinator has every marker acknowledged and the transaction
	// CompleteCommit; until then a verification answers
	// CONCURRENT_TRANSACTIONS. Wait for the end of the transaction.
	for {
		dt := kmsg.NewPtrDescribeTransactionsRequest()
		dt.TransactionalIDs = []string{id}
		r := request(t, cl, dt, func(r *kmsg.DescribeTransactionsResponse) int16 {
			if len(r.TransactionStates) == 0 {
				return 0
			}
			return r.TransactionStates[0].ErrorCode
		})
		if len(r.TransactionStates) == 1 && r.TransactionStates[0].State == "CompleteCommit" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction not CompleteCommit: %+v", r.TransactionStates)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The next transaction has not added the group's partition: refused.
	if r := commit(cl, 30); code(r) != kerr.TransactionAbortable {
		t.Fatalf("commit in the next transaction without AddOffsetsToTxn: %v, want TRANSACTION_ABORTABLE", code(r))
	}
	if err, off := fetch(); err != nil || off != 21 {
		t.Fatalf("after the refused commit: %v offset %d, want 21 committed", err, off)
	}

	m := scrape(t, b)
	if got := m["kafka_server_addpartitionstotxnmanager_verification_time_seconds_count"]; got != 4 {
		t.Errorf("verifications timed: %v, want 4", got)
	}
	if got := m["kafka_server_addpartitionstotxnmanager_verification_time_seconds_sum"]; got <= 0 {
		t.Errorf("verification time sum %v, want > 0", got)
	}
	if got := m["kafka_server_addpartitionstotxnmanager_verification_failures_total"]; got != 3 {
		t.Errorf("verification failures: %v, want 3", got)
	}
}
