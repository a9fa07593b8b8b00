package integration

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// TestTxnVerificationStrayEpoch: a transaction is open on a partition at
// epoch 0; a transactional batch of the same producer id at epoch 5 (an
// epoch the coordinator never issued) must be verified like a first batch
// (Kafka's hasOngoingTransaction(producerId, producerEpoch)), so the
// coordinator refuses it and nothing is written. Accepted, it raised the
// partition's epoch to 5 and the commit marker at epoch 0 was refused:
// the transaction stayed PrepareCommit and the LSO never moved. Here the
// commit completes and the LSO reaches the high watermark.
func TestTxnVerificationStrayEpoch(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"transaction.state.log.num.partitions": "2"})
	createTopic(t, b, "tse", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := newTxnRaw(t, ctx, b, "tse-txn", "tse")
	if r.epoch != 0 {
		t.Fatalf("first InitProducerId gave epoch %d, want 0", r.epoch)
	}
	r.addPartitions(0)
	if got := r.produce(11, 0, 2); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("first batch: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}

	r.epoch, r.nextSeq[0] = 5, 0
	stray := r.produce(11, 0, 1)
	r.epoch = 0
	// The coordinator answers the verification at an epoch it does not
	// hold PRODUCER_FENCED, which the produce path gives as
	// INVALID_PRODUCER_EPOCH (Kafka's AddPartitionsToTxnManager).
	wantProduceErr(t, "stray epoch-5 batch", stray, kerr.InvalidProducerEpoch, "")
	if lso, hw := r.offsets(0); lso != 0 || hw != 2 {
		t.Fatalf("after the stray batch: lso %d hw %d, want 0 and 2 (nothing written)", lso, hw)
	}

	r.nextSeq[0] = 2
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = r.id, r.pid, 0, true
	resp, err := end.RequestWith(ctx, r.defaultCl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("EndTxn commit: %v %v", err, kerr.ErrorForCode(resp.ErrorCode))
	}
	// The marker is written asynchronously: wait (bounded) for the LSO.
	deadline := time.Now().Add(20 * time.Second)
	for {
		lso, hw := r.offsets(0)
		if lso == 3 && hw == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the commit: lso %d hw %d, want 3 and 3 (the marker at 2)", lso, hw)
		}
		time.Sleep(20 * time.Millisecond) // no event to await from outside the broker
	}
	d := kmsg.NewPtrDescribeTransactionsRequest()
	d.TransactionalIDs = []string{r.id}
	dr, err := d.RequestWith(ctx, r.defaultCl)
	if err != nil || dr.TransactionStates[0].State != "CompleteCommit" {
		t.Fatalf("DescribeTransactions: %v %+v", err, dr)
	}
}
