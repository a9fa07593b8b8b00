package partition

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage/record"
)

var required = TxnVerification{Required: true}

func verified(g uint64) TxnVerification { return TxnVerification{Required: true, Guard: g} }

// TestVerificationOpensOnlyWithTheCurrentGuard: with verification
// required, a transactional batch opening a transaction is first sent
// back to be verified; with the guard StartVerification gave it passes;
// once the transaction is open the next batches need nothing; without
// verification required the first batch passes as before.
func TestVerificationOpensOnlyWithTheCurrentGuard(t *testing.T) {
	p := NewProducers()
	h := txnHdr(1, 0, 0, 2, 10)
	if dup, err, verify := p.CheckVerified(&h, required); !verify || err != nil || dup != nil {
		t.Fatalf("first batch: dup %v err %v verify %v, want verify", dup, err, verify)
	}
	g := p.StartVerification(1, 0, 0, 1000)
	if g == 0 || p.VerificationGuard(1) != g {
		t.Fatalf("guard %d, producer's %d", g, p.VerificationGuard(1))
	}
	if g2 := p.StartVerification(1, 0, 0, 1001); g2 != g {
		t.Fatalf("a second start got guard %d, want the one in progress %d", g2, g)
	}
	if _, err, verify := p.CheckVerified(&h, verified(g+1000)); err != kerr.InvalidTxnState || verify {
		t.Fatalf("another guard: %v verify %v, want INVALID_TXN_STATE", err, verify)
	}
	if _, err, verify := p.CheckVerified(&h, verified(g)); err != nil || verify {
		t.Fatalf("verified batch: %v verify %v", err, verify)
	}
	p.Update(&h, 5)
	if p.VerificationGuard(1) != 0 {
		t.Fatal("the append did not end the verification")
	}
	next := txnHdr(1, 0, 2, 1, 12)
	if _, err, verify := p.CheckVerified(&next, required); err != nil || verify {
		t.Fatalf("batch of the ongoing transaction: %v verify %v, want it to pass unverified", err, verify)
	}

	q := NewProducers()
	if _, err, verify := q.CheckVerified(&h, TxnVerification{}); err != nil || verify {
		t.Fatalf("verification off: %v verify %v", err, verify)
	}
}

// TestVerificationVoidedByMarker is the race KIP-890 closes: a batch
// verified while the transaction was open arrives after the abort marker;
// its guard is gone with the marker, so it is refused rather than opening
// a transaction the coordinator does not know (the LSO would hang there).
func TestVerificationVoidedByMarker(t *testing.T) {
	p := NewProducers()
	apply(t, p, txnHdr(1, 0, 0, 2, 10)) // the transaction's data, open at 10
	late := txnHdr(1, 0, 2, 1, 0)
	// Ongoing: the late batch would pass. The abort comes first.
	m := markerHdr(1, 0, 12)
	p.ApplyMarker(&m, record.EndTxn{Type: record.ControlAbort, CoordinatorEpoch: 0})
	if _, _, verify := p.CheckVerified(&late, required); !verify {
		t.Fatal("after the marker the late batch must be verified again")
	}
	g := p.StartVerification(1, 2, 0, 1000)
	// The coordinator said yes (a racing answer), then another marker.
	m2 := markerHdr(1, 0, 13)
	p.ApplyMarker(&m2, record.EndTxn{Type: record.ControlAbort, CoordinatorEpoch: 0})
	if _, err, _ := p.CheckVerified(&late, verified(g)); err != kerr.InvalidTxnState {
		t.Fatalf("guard from before the marker: %v, want INVALID_TXN_STATE", err)
	}
	if got := p.LastStableOffset(14); got != 14 {
		t.Fatalf("LSO %d, want the high watermark 14 (nothing left open)", got)
	}
}

// TestVerificationLowestSequence: while a verification is in progress a
// batch above the lowest sequence seen is refused (OUT_OF_ORDER), so the
// lower one, retried, cannot be overtaken; a new epoch resets it.
func TestVerificationLowestSequence(t *testing.T) {
	p := NewProducers()
	g := p.StartVerification(7, 5, 0, 1000)
	p.StartVerification(7, 3, 0, 1000)
	hi := txnHdr(7, 0, 5, 1, 0)
	if _, err, _ := p.CheckVerified(&hi, verified(g)); err != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("sequence 5 over the lowest 3: %v", err)
	}
	lo := txnHdr(7, 0, 3, 2, 0)
	if _, err, _ := p.CheckVerified(&lo, verified(g)); err != nil {
		t.Fatalf("lowest sequence: %v", err)
	}
	p.StartVerification(7, 9, 1, 1000) // new epoch: lowest is 9 now
	e1 := txnHdr(7, 1, 9, 1, 0)
	if _, err, _ := p.CheckVerified(&e1, verified(g)); err != nil {
		t.Fatalf("new epoch's batch: %v", err)
	}
}

// TestVerificationExpires: a verification never completed goes after
// producer.id.expiration.ms, as Kafka's removeExpiredProducers does.
func TestVerificationExpires(t *testing.T) {
	p := NewProducers()
	p.StartVerification(3, 0, 0, 1000)
	p.Expire(1999, time.Second)
	if p.VerificationGuard(3) == 0 {
		t.Fatal("expired too early")
	}
	p.Expire(2000, time.Second)
	if p.VerificationGuard(3) != 0 {
		t.Fatal("not expired")
	}
}

// TestCoreAnswersVerifyThenAppends: CheckProduce sends a TxnVerify
// produce back with a guard (an error result, never a success), and takes
// the same batch with that guard.
func TestCoreAnswersVerifyThenAppends(t *testing.T) {
	c := NewCore(CoreConfig{TP: TopicPartition{Topic: "t", Partition: 0}, BrokerID: 1})
	c.rep.Role = RoleLeader
	c.rep.MinInsync = 1
	p := &Produce{Header: txnHdr(9, 0, 0, 1, 0), Acks: 1, TxnVerify: true}
	res, v := c.CheckProduce(p)
	if v != ProduceAnswer || res.VerifyGuard == 0 || res.Err != kerr.InvalidTxnState {
		t.Fatalf("first pass: %+v verdict %v", res, v)
	}
	again := &Produce{Header: p.Header, Acks: 1, TxnVerify: true, VerificationGuard: res.VerifyGuard}
	if res2, v := c.CheckProduce(again); v != ProduceAppend {
		t.Fatalf("verified pass: %+v verdict %v, want append", res2, v)
	}
	// A marker between verification and append voids the guard.
	m := markerHdr(9, 0, 0)
	c.prod.ApplyMarker(&m, record.EndTxn{Type: record.ControlAbort})
	if res3, v := c.CheckProduce(again); v != ProduceAnswer || res3.Err != kerr.InvalidTxnState || res3.VerifyGuard != 0 {
		t.Fatalf("after a marker: %+v verdict %v, want INVALID_TXN_STATE", res3, v)
	}
}

// TestCoordinatorBatchVerification is a TxnOffsetCommit's batch in
// __consumer_offsets (producer id, transactional, no sequence): the guard
// comes from StartCoordinatorVerification before the batch exists; the
// batch passes with it, is refused INVALID_TXN_STATE without one (never
// sent back to verify: there is no second round) or once a marker voided
// it; with the producer's transaction already ongoing no guard is needed
// (guard 0), and off the leader there is none.
func TestCoordinatorBatchVerification(t *testing.T) {
	c := NewCore(CoreConfig{TP: TopicPartition{Topic: "__consumer_offsets", Partition: 3}, BrokerID: 1})
	if _, err := c.StartCoordinatorVerification(7, 0); err != kerr.NotLeaderForPartition {
		t.Fatalf("follower: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
	c.rep.Role = RoleLeader
	c.rep.MinInsync = 1
	coord := txnHdr(7, 0, -1, 1, 0)
	if !IsCoordinatorBatch(&coord) {
		t.Fatal("test batch is not a coordinator batch")
	}
	unguarded := &Produce{Header: coord, Acks: 1, TxnVerify: true}
	if res, v := c.CheckProduce(unguarded); v != ProduceAnswer || res.Err != kerr.InvalidTxnState || res.VerifyGuard != 0 {
		t.Fatalf("no guard: %+v verdict %v, want INVALID_TXN_STATE without a guard to verify", res, v)
	}
	g, err := c.StartCoordinatorVerification(7, 0)
	if err != nil || g == 0 || c.prod.VerificationGuard(7) != g {
		t.Fatalf("start: guard %d err %v (producer's %d)", g, err, c.prod.VerificationGuard(7))
	}
	if g2, _ := c.StartCoordinatorVerification(7, 0); g2 != g {
		t.Fatalf("second start: guard %d, want the one in progress %d", g2, g)
	}
	if res, v := c.CheckProduce(&Produce{Header: coord, Acks: 1, TxnVerify: true, VerificationGuard: g + 1}); v != ProduceAnswer || res.Err != kerr.InvalidTxnState {
		t.Fatalf("other guard: %+v verdict %v, want INVALID_TXN_STATE", res, v)
	}
	// A marker between the verification and the append voids the guard.
	m := markerHdr(7, 0, 0)
	c.prod.ApplyMarker(&m, record.EndTxn{Type: record.ControlAbort})
	if res, v := c.CheckProduce(&Produce{Header: coord, Acks: 1, TxnVerify: true, VerificationGuard: g}); v != ProduceAnswer || res.Err != kerr.InvalidTxnState {
		t.Fatalf("after a marker: %+v verdict %v, want INVALID_TXN_STATE", res, v)
	}
	g, _ = c.StartCoordinatorVerification(7, 0)
	if res, v := c.CheckProduce(&Produce{Header: coord, Acks: 1, TxnVerify: true, VerificationGuard: g}); v != ProduceAppend {
		t.Fatalf("verified: %+v verdict %v, want append", res, v)
	}
	opened := coord
	opened.BaseOffset = 1
	c.prod.Update(&opened, 5)
	if g, err := c.StartCoordinatorVerification(7, 0); g != 0 || err != nil {
		t.Fatalf("transaction ongoing: guard %d err %v, want 0 (nothing to verify)", g, err)
	}
	if res, v := c.CheckProduce(&Produce{Header: coord, Acks: 1, TxnVerify: true}); v != ProduceAppend {
		t.Fatalf("batch of the ongoing transaction: %+v verdict %v, want append", res, v)
	}
	// Verification off: coordinator batches pass as before.
	off := NewCore(CoreConfig{TP: TopicPartition{Topic: "__consumer_offsets", Partition: 3}, BrokerID: 1})
	off.rep.Role, off.rep.MinInsync = RoleLeader, 1
	if res, v := off.CheckProduce(&Produce{Header: coord, Acks: 1}); v != ProduceAppend {
		t.Fatalf("verification off: %+v verdict %v", res, v)
	}
}
