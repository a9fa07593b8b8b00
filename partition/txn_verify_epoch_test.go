package partition

import "testing"

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
