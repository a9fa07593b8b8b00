package partition

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestNewEpochBatchIsVerified: a producer has a transaction
// open here at epoch 0; a transactional batch of the same producer id at
// epoch 5 (an epoch its coordinator never issued) must be verified with
// the coordinator, as Kafka's hasOngoingTransaction(producerId,
// producerEpoch) does, not join the open transaction: accepted, it raises
// the partition's epoch to 5, the coordinator's marker at epoch 0 is
// refused with INVALID_PRODUCER_EPOCH, the transaction stays in
// PrepareCommit and the partition's LSO never moves again.
func TestNewEpochBatchIsVerified(t *testing.T) {
	p := NewProducers()
	h := txnHdr(1, 0, 0, 1, 10)
	g := p.StartVerification(1, 0, 0, 1000)
	if _, err, _ := p.CheckVerified(&h, verified(g)); err != nil {
		t.Fatal(err)
	}
	p.Update(&h, 10)
	z := txnHdr(1, 5, 0, 1, 11)
	if _, err, verify := p.CheckVerified(&z, required); err == nil && !verify {
		t.Fatalf("batch at epoch 5 joined the epoch-0 transaction without verification")
	}
}

// TestPipelinedBatchOvertakingVerificationIsVerified: batches 0, 1 and 2
// of a producer were pipelined; 0 and 1 were sent back for verification,
// 0 is in the log, 1 is still being verified when 2 arrives (the
// transaction ongoing, so 2 needs no verification of its own). Refusing 2
// OUT_OF_ORDER_SEQUENCE_NUMBER would be fatal to the producer: it is
// verified too, and appended once 1 is in; a genuine gap is refused on
// the verified pass.
func TestPipelinedBatchOvertakingVerificationIsVerified(t *testing.T) {
	p := NewProducers()
	b0 := txnHdr(1, 0, 0, 2, 10)
	g := p.StartVerification(1, 0, 0, 1000)
	p.StartVerification(1, 2, 0, 1000) // batch 1 joins
	if _, err, _ := p.CheckVerified(&b0, verified(g)); err != nil {
		t.Fatal(err)
	}
	p.Update(&b0, 10)
	b2 := txnHdr(1, 0, 4, 2, 14)
	if _, err, verify := p.CheckVerified(&b2, required); err != nil || !verify {
		t.Fatalf("batch 2 before batch 1: %v verify %v, want it verified", err, verify)
	}
	g2 := p.StartVerification(1, 4, 0, 1000)
	if _, err, _ := p.CheckVerified(&b2, verified(g2)); err != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("verified batch 2 still before batch 1: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
	b1 := txnHdr(1, 0, 2, 2, 12)
	if _, err, verify := p.CheckVerified(&b1, verified(g)); err != nil || verify {
		t.Fatalf("batch 1 with its guard: %v verify %v", err, verify)
	}
	p.Update(&b1, 10)
	if _, err, verify := p.CheckVerified(&b2, verified(g2)); err != nil || verify {
		t.Fatalf("batch 2 after batch 1: %v verify %v", err, verify)
	}
	p.Update(&b2, 10)
	b3 := txnHdr(1, 0, 6, 1, 16)
	if _, err, verify := p.CheckVerified(&b3, required); err != nil || verify {
		t.Fatalf("next batch in sequence: %v verify %v, want it to pass unverified", err, verify)
	}
}
