package partition

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage/record"
)

// NumBatchesToRetain is how many recent batches are remembered per producer
// id for duplicate detection (Kafka ProducerStateEntry.NumBatchesToRetain;
// also the producer's max.in.flight.requests.per.connection limit for
// idempotence).
const NumBatchesToRetain = 5

// BatchMeta is what the producer state remembers of one appended batch of
// an idempotent producer.
type BatchMeta struct {
	FirstSeq    int32
	LastSeq     int32
	FirstOffset int64 // offset of the batch's first record
	LastOffset  int64
	Timestamp   int64 // ms: the batch's max timestamp (or log append time)
}

// ProducerEntry is the state of one producer id on this partition.
type ProducerEntry struct {
	Epoch   int16
	Batches []BatchMeta // oldest first, at most NumBatchesToRetain
	// CoordinatorEpoch is the transaction coordinator epoch of the last
	// marker written for this producer (-1 before any): a marker from an
	// older coordinator is fenced (TRANSACTION_COORDINATOR_FENCED).
	CoordinatorEpoch int32
	// TxnFirstOffset is the offset of the first batch of the producer's
	// ongoing transaction on this partition, -1 when none.
	TxnFirstOffset int64
	// LastTimestamp is the max timestamp (ms) of the producer's last batch
	// or marker (DescribeProducers' LastTimestamp).
	LastTimestamp int64
}

// LastSeq is the sequence of the last record appended, or -1 when none.
func (e *ProducerEntry) LastSeq() int32 {
	if len(e.Batches) == 0 {
		return record.NoSequence
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

// CompletedTxn is a transaction a marker ended on this partition (Kafka's
// CompletedTxn): the offsets of its first data batch and of the marker.
type CompletedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64 // the marker's offset
	Aborted     bool
}

// txnSpan is one transaction in the LSO bookkeeping: ongoing (last -1) or
// completed with its marker not yet below the high watermark.
type txnSpan struct {
	pid         int64
	first, last int64
}

// Producers is the idempotent and transactional producer state of one
// partition: per producer id, its epoch, the last NumBatchesToRetain
// batches and its ongoing transaction. It follows Kafka 3.x
// (ProducerStateManager / ProducerAppendInfo, KIP-98, KIP-360):
//
//   - a retry of one of the remembered batches (same id, epoch and sequence
//     range) is a duplicate: the caller answers it with the original
//     offsets and does not append it;
//   - an epoch older than the current one → INVALID_PRODUCER_EPOCH;
//   - a new epoch must start at sequence 0 (else OUT_OF_ORDER_SEQUENCE_NUMBER),
//     except for a producer id with no state here;
//   - the same epoch must continue at lastSeq+1 (wrapping at MaxInt32 to 0),
//     else OUT_OF_ORDER_SEQUENCE_NUMBER; after a marker that bumped the
//     epoch the sequence restarts at 0;
//   - an unknown producer id is accepted at any sequence: since KIP-360
//     (Kafka 2.5) the broker no longer answers UNKNOWN_PRODUCER_ID for
//     produce, because state may legitimately be gone after retention or
//     DeleteRecords;
//   - a transactional batch opens a transaction (its first offset bounds
//     the last stable offset) unless one is ongoing; a non-transactional
//     batch while one is ongoing → INVALID_TXN_STATE;
//   - a transactional batch with base sequence -1 is written by a
//     coordinator (Kafka's AppendOrigin.COORDINATOR: the group
//     coordinator's TxnOffsetCommit records in __consumer_offsets): no
//     duplicate or sequence check, the epoch is still checked. Clients
//     cannot send one: the Produce handler refuses a batch with a
//     producer id and no sequence (INVALID_RECORD, record.Validate);
//   - with KIP-890 verification required (CheckVerified), a client's
//     transactional batch that would open a transaction must carry the
//     guard of the producer's current verification (txn_verify.go);
//   - a marker (control batch, CheckMarker / ApplyMarker) from an older
//     epoch → INVALID_PRODUCER_EPOCH, from an older coordinator epoch →
//     TRANSACTION_COORDINATOR_FENCED; it ends the ongoing transaction,
//     which stays unstable until the high watermark passes the marker.
//
// On start the state is loaded from the newest <offset>.snapshot (Kafka's
// ProducerSnapshot format, snapshot.go; written on segment roll and clean
// stop) and the batches after it are scanned (Log.ScanTxnBatches: 61 bytes
// per data batch, each marker decoded); without a snapshot the whole log
// is scanned. Idle producers are forgotten after producer.id.expiration.ms
// (Expire, run periodically by the partition actor).
//
// Not safe for concurrent use: the partition actor owns it.
type Producers struct {
	m map[int64]*ProducerEntry
	// ongoing are the open transactions by first offset (appends come in
	// offset order); unreplicated the completed ones whose marker the high
	// watermark has not passed (Kafka's unreplicatedTxns).
	ongoing      []txnSpan
	unreplicated []txnSpan
	// verifying is the KIP-890 verification state by producer id (Kafka's
	// ProducerStateManager.verificationStates): kept in memory only, from
	// the start of a verification until the producer's next transactional
	// batch or marker is in the log (txn_verify.go).
	verifying map[int64]*verification
}

// NewProducers returns empty producer state.
func NewProducers() *Producers {
	return &Producers{m: make(map[int64]*ProducerEntry), verifying: make(map[int64]*verification)}
}

// Len is the number of producer ids tracked.
func (p *Producers) Len() int { return len(p.m) }

// Entry returns the state of a producer id (nil when unknown). The entry
// must not be modified.
func (p *Producers) Entry(producerID int64) *ProducerEntry { return p.m[producerID] }

// Each calls fn for every producer id and its entry (not to be modified),
// in no particular order (DescribeProducers).
func (p *Producers) Each(fn func(producerID int64, e *ProducerEntry)) {
	for id, e := range p.m {
		fn(id, e)
	}
}

// IsCoordinatorBatch reports whether h is a coordinator-origin
// transactional batch (producer id, transactional, base sequence -1).
func IsCoordinatorBatch(h *record.Header) bool {
	return h.HasProducerID() && h.IsTransactional() && h.BaseSequence == record.NoSequence
}

// Check decides what to do with a data batch about to be appended as
// leader, without KIP-890 verification (CheckVerified with a zero
// TxnVerification). Batches without a producer id always pass. It returns
// the remembered metadata when the batch is a retried duplicate (do not
// append; answer with dup.FirstOffset), or a Kafka error to answer instead
// of appending: INVALID_RECORD (an idempotent batch without sequence),
// INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_TXN_STATE.
func (p *Producers) Check(h *record.Header) (dup *BatchMeta, err *kerr.Error) {
	dup, err, _ = p.CheckVerified(h, TxnVerification{})
	return dup, err
}

// CheckVerified is Check with KIP-890 part 1 (Kafka's
// UnifiedLog.analyzeAndValidateProducerState and ProducerAppendInfo, origin
// CLIENT or COORDINATOR), in Kafka's order: duplicate, epoch, then, for a
// client's transactional batch of a producer with no transaction ongoing
// here at the batch's epoch when v.Required, the verification: with no v.Guard yet verify is
// true (nothing else decided: the caller starts a verification with
// StartVerification, asks the coordinator, and checks again with the
// guard); a guard that is not the producer's current one (a marker or an
// append came between, or the state was lost) → INVALID_TXN_STATE. Then
// the sequence, where a verification in progress for a transaction not
// yet open refuses a sequence above the lowest one it saw
// (OUT_OF_ORDER_SEQUENCE_NUMBER, Kafka's
// VerificationStateEntry.lowestSequence), and an unguarded batch of the
// open transaction out of sequence is verified too (verify true: it
// overtook pipelined batches still being verified), and a non-transactional batch
// while a transaction is ongoing → INVALID_TXN_STATE. A coordinator batch
// (IsCoordinatorBatch) is verified before it is built: with v.Required
// and no transaction ongoing, one without the producer's current guard is
// INVALID_TXN_STATE, never verify (txn_verify.go).
func (p *Producers) CheckVerified(h *record.Header, v TxnVerification) (dup *BatchMeta, err *kerr.Error, verify bool) {
	if !h.HasProducerID() {
		return nil, nil, false
	}
	coordinator := IsCoordinatorBatch(h)
	if h.BaseSequence < 0 && !coordinator {
		// An idempotent batch always carries a sequence.
		return nil, kerr.InvalidRecord, false
	}
	e := p.m[h.ProducerID]
	if e != nil && h.ProducerEpoch == e.Epoch && !coordinator {
		first, last := h.BaseSequence, h.LastSequence()
		for i := range e.Batches {
			if b := &e.Batches[i]; b.FirstSeq == first && b.LastSeq == last {
				m := *b
				return &m, nil, false
			}
		}
	}
	if e != nil && h.ProducerEpoch < e.Epoch {
		return nil, kerr.InvalidProducerEpoch, false
	}
	ongoing := e.ongoingAt(h.ProducerEpoch)
	if v.Required && ongoing && v.Guard == 0 && !coordinator && !inSequence(e.LastSeq(), h.BaseSequence) {
		// A batch of the open transaction that overtook lower sequences
		// still being verified (pipelined produces, each sent back for
		// verification before the first was in the log): verified too
		// rather than refused, as Kafka verifies every batch that arrives
		// during a verification. The handler sends it again after the
		// earlier ones (produce_verify_order.go); still out of order
		// then, it is OUT_OF_ORDER_SEQUENCE_NUMBER below.
		return nil, nil, true
	}
	if v.Required && h.IsTransactional() && !ongoing {
		if v.Guard == 0 {
			if coordinator {
				// Verified before the batch was built, or not at all
				// (txn_verify.go): no second round.
				return nil, kerr.InvalidTxnState, false
			}
			return nil, nil, true
		}
		if vs := p.verifying[h.ProducerID]; vs == nil || vs.guard != v.Guard {
			return nil, kerr.InvalidTxnState, false
		}
	}
	if vs := p.verifying[h.ProducerID]; vs != nil && !ongoing && !coordinator && h.BaseSequence > vs.lowestSeq {
		return nil, kerr.OutOfOrderSequenceNumber, false
	}
	if e == nil {
		// Unknown producer: any sequence (KIP-360); a transactional batch
		// opens a transaction here.
		return nil, nil, false
	}
	if !coordinator {
		if h.ProducerEpoch != e.Epoch {
			if h.BaseSequence != 0 && e.Epoch != -1 {
				return nil, kerr.OutOfOrderSequenceNumber, false
			}
		} else if e.Epoch != -1 && !inSequence(e.LastSeq(), h.BaseSequence) {
			// An entry without batches (its epoch set by a marker) starts
			// again at 0: inSequence(-1, 0).
			return nil, kerr.OutOfOrderSequenceNumber, false
		}
	}
	if e.TxnFirstOffset >= 0 && !h.IsTransactional() {
		return nil, kerr.InvalidTxnState, false
	}
	return nil, nil, false
}

// ongoingAt reports whether e has a transaction ongoing at epoch: Kafka's
// UnifiedLog.hasOngoingTransaction(producerId, producerEpoch) (3.7+). A
// batch at another epoch is not part of that transaction and needs its
// own verification, so a stray epoch cannot join it unverified, raise the
// producer's epoch and have the coordinator's marker at the transaction's
// epoch refused (INVALID_PRODUCER_EPOCH), leaving it open for ever. nil-safe.
func (e *ProducerEntry) ongoingAt(epoch int16) bool {
	return e != nil && e.TxnFirstOffset >= 0 && e.Epoch == epoch
}

// CheckMarker decides whether a transaction marker (WriteTxnMarkers) for
// producerID may be appended as leader: INVALID_PRODUCER_EPOCH when epoch
// is older than the producer's, TRANSACTION_COORDINATOR_FENCED when
// coordinatorEpoch is older than the last marker's (Kafka's
// ProducerAppendInfo.appendEndTxnMarker checks, origin COORDINATOR).
func (p *Producers) CheckMarker(producerID int64, epoch int16, coordinatorEpoch int32) *kerr.Error {
	e := p.m[producerID]
	if e == nil {
		return nil
	}
	if epoch < e.Epoch {
		return kerr.InvalidProducerEpoch
	}
	if e.CoordinatorEpoch > coordinatorEpoch {
		return kerr.TransactionCoordinatorFenced
	}
	return nil
}

// inSequence reports whether next follows last (Kafka wraps sequences at MaxInt32).
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == int32(^uint32(0)>>1))
}

// Update records a data batch that is now in the log (h carries its
// assigned base offset). Used after a leader append, by followers and when
// rebuilding from the log; it does not check sequences (the log is the
// truth). timestamp is the batch's max timestamp in ms. Control batches
// go to ApplyMarker instead and are ignored here.
func (p *Producers) Update(h *record.Header, timestamp int64) {
	if !h.HasProducerID() || h.IsControl() {
		return
	}
	e := p.entry(h.ProducerID, h.ProducerEpoch)
	if h.ProducerEpoch != e.Epoch {
		// A new epoch starts a new sequence space: forget the old batches.
		e.Epoch = h.ProducerEpoch
		e.Batches = e.Batches[:0]
	}
	if len(e.Batches) == NumBatchesToRetain {
		copy(e.Batches, e.Batches[1:])
		e.Batches = e.Batches[:NumBatchesToRetain-1]
	}
	e.Batches = append(e.Batches, BatchMeta{
		FirstSeq:    h.BaseSequence,
		LastSeq:     h.LastSequence(),
		FirstOffset: h.BaseOffset,
		LastOffset:  h.LastOffset(),
		Timestamp:   timestamp,
	})
	e.LastTimestamp = timestamp
	if h.IsTransactional() {
		// The transaction is open here now (or already was): verification,
		// if any, is over (Kafka's UnifiedLog.updateProducers).
		delete(p.verifying, h.ProducerID)
	}
	if h.IsTransactional() && e.TxnFirstOffset < 0 {
		e.TxnFirstOffset = h.BaseOffset
		p.ongoing = append(p.ongoing, txnSpan{pid: h.ProducerID, first: h.BaseOffset, last: -1})
	}
}

func (p *Producers) entry(id int64, epoch int16) *ProducerEntry {
	e := p.m[id]
	if e == nil {
		e = &ProducerEntry{Epoch: epoch, CoordinatorEpoch: -1, TxnFirstOffset: -1, LastTimestamp: -1}
		p.m[id] = e
	}
	return e
}

// ApplyMarker records a transaction marker now in the log (h is its
// control batch with its assigned offset, m its decoded record). It ends
// the producer's ongoing transaction, if any, and returns it (nil for a
// marker of a transaction with no data here: it changes neither the last
// stable offset nor the transaction index), with abortLSO the last stable
// offset to record with an aborted one in the .txnindex (Kafka's
// ProducerStateManager.lastStableOffset: the first offset of the earliest
// other ongoing transaction, else the offset after the marker). The
// completed transaction stays unstable until OnHighWatermark passes the
// marker. The marker's epoch becomes the producer's (an epoch bump resets
// its sequences). No checks: see CheckMarker.
func (p *Producers) ApplyMarker(h *record.Header, m record.EndTxn) (done *CompletedTxn, abortLSO int64) {
	e := p.entry(h.ProducerID, h.ProducerEpoch)
	// A verification that started before the marker is void: its guard
	// no longer matches, so a produce it verified is refused (the
	// hanging-transaction race KIP-890 closes).
	delete(p.verifying, h.ProducerID)
	abortLSO = -1
	if e.TxnFirstOffset >= 0 {
		done = &CompletedTxn{ProducerID: h.ProducerID, FirstOffset: e.TxnFirstOffset, LastOffset: h.BaseOffset, Aborted: !m.Commit()}
		abortLSO = h.BaseOffset + 1
		for _, t := range p.ongoing {
			if t.pid != h.ProducerID {
				abortLSO = t.first
				break
			}
		}
		for i, t := range p.ongoing {
			if t.pid == h.ProducerID {
				p.ongoing = append(p.ongoing[:i], p.ongoing[i+1:]...)
				break
			}
		}
		p.unreplicated = append(p.unreplicated, txnSpan{pid: h.ProducerID, first: done.FirstOffset, last: h.BaseOffset})
	}
	if h.ProducerEpoch != e.Epoch {
		e.Epoch = h.ProducerEpoch
		e.Batches = e.Batches[:0]
	}
	e.CoordinatorEpoch = m.CoordinatorEpoch
	e.TxnFirstOffset = -1
	e.LastTimestamp = h.MaxTimestamp
	return done, abortLSO
}

// OnHighWatermark forgets the completed transactions whose marker is
// below hw: they no longer hold the last stable offset back.
func (p *Producers) OnHighWatermark(hw int64) {
	n := 0
	for _, t := range p.unreplicated {
		if t.last >= hw {
			p.unreplicated[n] = t
			n++
		}
	}
	p.unreplicated = p.unreplicated[:n]
}

// FirstUnstableOffset is the first offset of the earliest transaction that
// is ongoing or whose marker is not yet below the high watermark (Kafka's
// ProducerStateManager.firstUnstableOffset); ok false when none.
func (p *Producers) FirstUnstableOffset() (offset int64, ok bool) {
	offset = -1
	if len(p.ongoing) > 0 {
		offset, ok = p.ongoing[0].first, true
	}
	for _, t := range p.unreplicated {
		if !ok || t.first < offset {
			offset, ok = t.first, true
		}
	}
	return offset, ok
}

// LastStableOffset is min(hw, FirstUnstableOffset) after OnHighWatermark(hw):
// the offset below which every transaction is decided and replicated,
// where read_committed consumers stop.
func (p *Producers) LastStableOffset(hw int64) int64 {
	p.OnHighWatermark(hw)
	if fu, ok := p.FirstUnstableOffset(); ok && fu < hw {
		return fu
	}
	return hw
}

// OngoingTxns lists (producer id, first offset) of the open
// transactions, earliest first (DescribeProducers' CurrentTxnStartOffset).
func (p *Producers) OngoingTxns() []CompletedTxn {
	out := make([]CompletedTxn, 0, len(p.ongoing))
	for _, t := range p.ongoing {
		out = append(out, CompletedTxn{ProducerID: t.pid, FirstOffset: t.first, LastOffset: -1})
	}
	return out
}

// Expire forgets the producers that have no open transaction and whose
// last batch or marker timestamp (ms) is at least expiration old at nowMs
// (Kafka's ProducerStateManager.removeExpiredProducers with
// producer.id.expiration.ms, KIP-854). It returns how many went. A
// producer that writes again afterwards is an unknown producer: any
// sequence is accepted (KIP-360).
func (p *Producers) Expire(nowMs int64, expiration time.Duration) int {
	n := 0
	for id, e := range p.m {
		if e.TxnFirstOffset < 0 && nowMs-e.LastTimestamp >= expiration.Milliseconds() {
			delete(p.m, id)
			n++
		}
	}
	// Verifications never completed are dropped after the same time
	// (Kafka's removeExpiredProducers); they are not counted.
	for id, vs := range p.verifying {
		if nowMs-vs.startedMs >= expiration.Milliseconds() {
			delete(p.verifying, id)
		}
	}
	return n
}
