package handlers

import (
	"encoding/binary"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/storage/record"
	"gregor/wire"
)

// KIP-890 part 1 on the Produce path (Kafka's
// ReplicaManager.handleProduceAppend and its postVerificationCallback).
// The partition actor answers a transactional batch that would open its
// producer's transaction with a verification guard instead of appending
// (partition/txn_verify.go); here, on the request's later goroutine, the
// coordinator is asked through Broker.TxnVerifier for all such partitions
// of the request at once, and each verified batch goes back to its actor
// with the guard. The connection's reader goroutine and the actors never
// wait for the coordinator.

// verifyTimeout bounds the wait for the coordinator's answer: Kafka's
// inter-broker request.timeout.ms default (30 s), after which the partition
// is answered NOT_ENOUGH_REPLICAS (a NETWORK_EXCEPTION underneath).
const verifyTimeout = 30 * time.Second

// verifyProduce verifies the partitions in unverified (all of one
// request, so of one producer: oneTransactionalProducer) and appends the
// verified ones, setting every partition's response. timeout is the
// request's, applied again to the appends, as Kafka's delayed produce
// starts after the verification. order is the request's place in its
// producer's queue (nil = none): the verified batches go back to the
// partitions only after the earlier produces of the producer sent theirs,
// and order is done once they are sent (produce_verify_order.go).
func (b *Broker) verifyProduce(rc *wire.RequestContext, req *kmsg.ProduceRequest, unverified []pendingProduce, timeout time.Duration, order *turn) {
	h := unverified[0].msg.Header
	parts := make(map[string][]int32)
	for _, pp := range unverified {
		parts[pp.tp.Topic] = append(parts[pp.tp.Topic], pp.tp.Partition)
	}
	codes := b.awaitVerification(rc, *req.TransactionID, h.ProducerID, h.ProducerEpoch, parts)
	if !order.wait(rc, verifyTimeout, b.closing()) {
		// An earlier produce of the producer still holds its turn (bounded
		// by its own timeouts, so only when the connection or the broker
		// goes): retriable, the client sends the batch again.
		codes = nil
	}
	defer order.done()
	var again []pendingProduce
	for _, pp := range unverified {
		code, ok := codes[pp.tp.Topic][pp.tp.Partition]
		if !ok {
			code = kerr.NetworkException.Code
		}
		if code != 0 {
			err, msg := produceVerifyError(code, req.Version)
			setProduceError(pp.p, req.Version, err, msg, nil)
			continue
		}
		hd, ok := b.Replicas.Get(pp.tp)
		if !ok {
			setProduceError(pp.p, req.Version, notHosted(b, pp.tp), "", nil)
			continue
		}
		reply := make(chan partition.ProduceResult, 1)
		m := pp.msg
		msg := &partition.Produce{Batch: m.Batch, Header: m.Header, Acks: m.Acks, LogAppendTime: m.LogAppendTime,
			Reply: reply, CorrelationID: m.CorrelationID, TxnVerify: true, VerificationGuard: pp.guard}
		hd.Produce(msg)
		again = append(again, pendingProduce{p: pp.p, tp: pp.tp, msg: msg, reply: reply})
	}
	// The verified batches are in their partitions' mailboxes, in the
	// producer's order: the next produce may send its own.
	order.done()
	if len(again) == 0 {
		return
	}
	// With a guard the actor never asks for another verification; should
	// it, the batch was not appended: say so.
	for _, pp := range waitProduce(rc, again, req.Version, timeout) {
		setProduceError(pp.p, req.Version, kerr.InvalidTxnState, "Record was not part of an ongoing transaction", nil)
	}
}

// awaitVerification calls the verifier and waits for its codes, bounded by
// verifyTimeout, the connection's life and the handlers' Close; a wait cut
// short answers NETWORK_EXCEPTION for every partition.
func (b *Broker) awaitVerification(rc *wire.RequestContext, txnID string, pid int64, epoch int16, parts map[string][]int32) map[string]map[int32]int16 {
	ch := make(chan map[string]map[int32]int16, 1)
	b.TxnVerifier.Verify(txnID, pid, epoch, parts, func(r map[string]map[int32]int16) { ch <- r })
	t := time.NewTimer(verifyTimeout)
	defer t.Stop()
	var done <-chan struct{}
	if rc.Ctx != nil {
		done = rc.Ctx.Done()
	}
	select {
	case r := <-ch:
		return r
	case <-t.C:
	case <-done:
	case <-b.closing():
	}
	return nil // every partition: NETWORK_EXCEPTION (verifyProduce)
}

// produceVerifyError is the produce error for a verification's code, as
// Kafka answers it: TRANSACTION_ABORTABLE only from Produce v11 on (older
// clients get INVALID_TXN_STATE, Kafka's defaultError operation);
// INVALID_TXN_STATE with "Partition was not added to the transaction";
// the coordinator's retriable answers as NOT_ENOUGH_REPLICAS, which older
// clients retry without a metadata refresh.
func produceVerifyError(code int16, version int16) (*kerr.Error, string) {
	if code == kerr.TransactionAbortable.Code && version <= 10 {
		code = kerr.InvalidTxnState.Code
	}
	err := kerr.ErrorForCode(code)
	ke, ok := err.(*kerr.Error)
	if !ok {
		return kerr.UnknownServerError, ""
	}
	switch ke {
	case kerr.InvalidTxnState:
		return ke, "Partition was not added to the transaction"
	case kerr.ConcurrentTransactions, kerr.NetworkException, kerr.CoordinatorLoadInProgress, kerr.CoordinatorNotAvailable, kerr.NotCoordinator:
		return kerr.NotEnoughReplicas, "Unable to verify the partition has been added to the transaction. Underlying error: " + ke.Message
	}
	return ke, ""
}

// transactionalProducer is the producer id of req's first transactional
// batch (a v3+ partition holds one batch; its header is read in place),
// false when it has none.
func transactionalProducer(req *kmsg.ProduceRequest) (int64, bool) {
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			r := rp.Records
			if len(r) < record.OffBaseSequence || r[record.OffMagic] != 2 || r[record.OffAttributes+1]&record.AttrTransactional == 0 {
				continue
			}
			if id := int64(binary.BigEndian.Uint64(r[record.OffProducerID:])); id >= 0 {
				return id, true
			}
		}
	}
	return 0, false
}

// oneTransactionalProducer reports whether the transactional batches of
// req (a v3+ partition holds one batch; its header is read in place) all
// carry the same producer id and epoch (Kafka's handleProduceAppend
// refuses the request otherwise with INVALID_PRODUCER_ID_MAPPING).
func oneTransactionalProducer(req *kmsg.ProduceRequest) bool {
	var pid int64
	var epoch int16
	seen := false
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			r := rp.Records
			if len(r) < record.OffBaseSequence || r[record.OffMagic] != 2 || r[record.OffAttributes+1]&record.AttrTransactional == 0 {
				continue
			}
			id := int64(binary.BigEndian.Uint64(r[record.OffProducerID:]))
			ep := int16(binary.BigEndian.Uint16(r[record.OffProducerEpoch:]))
			if id < 0 {
				continue
			}
			if seen && (id != pid || ep != epoch) {
				return false
			}
			pid, epoch, seen = id, ep, true
		}
	}
	return true
}
