package partition

import (
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
}

// LastSeq is the sequence of the last record appended, or -1 when none.
func (e *ProducerEntry) LastSeq() int32 {
	if len(e.Batches) == 0 {
		return record.NoSequence
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

// Producers is the idempotent-producer state of one partition: per
// producer id, its epoch and the last NumBatchesToRetain batches. It follows
// Kafka 2.5+ (ProducerStateManager / ProducerAppendInfo, KIP-98, KIP-360):
//
//   - a retry of one of the remembered batches (same id, epoch and sequence
//     range) is a duplicate: the caller answers it with the original
//     offsets and does not append it;
//   - an epoch older than the current one → INVALID_PRODUCER_EPOCH;
//   - a new epoch must start at sequence 0 (else OUT_OF_ORDER_SEQUENCE_NUMBER),
//     except for a producer id with no state here;
//   - the same epoch must continue at lastSeq+1 (wrapping at MaxInt32 to 0),
//     else OUT_OF_ORDER_SEQUENCE_NUMBER;
//   - an unknown producer id is accepted at any sequence: since KIP-360
//     (Kafka 2.5) the broker no longer answers UNKNOWN_PRODUCER_ID for
//     produce, because state may legitimately be gone after retention or
//     DeleteRecords.
//
// Transactional batches are refused before they get here (Produce handler),
// so there is no transaction state. Kafka's .snapshot files are an
// optimisation we skip: on start the state is rebuilt by scanning batch
// headers from the log start (Log.ScanBatches), which reads only 61 bytes
// per batch. Producer id expiry (producer.id.expiration.ms) is not done yet.
//
// Not safe for concurrent use: the partition actor owns it.
type Producers struct {
	m map[int64]*ProducerEntry
}

// NewProducers returns empty producer state.
func NewProducers() *Producers { return &Producers{m: make(map[int64]*ProducerEntry)} }

// Len is the number of producer ids tracked.
func (p *Producers) Len() int { return len(p.m) }

// Entry returns the state of a producer id (nil when unknown). The entry
// must not be modified.
func (p *Producers) Entry(producerID int64) *ProducerEntry { return p.m[producerID] }

// Check decides what to do with a batch about to be appended as leader.
// Batches without a producer id always pass. It returns the remembered
// metadata when the batch is a retried duplicate (do not append; answer
// with dup.FirstOffset), or a Kafka error to answer instead of appending.
func (p *Producers) Check(h *record.Header) (dup *BatchMeta, err *kerr.Error) {
	if !h.HasProducerID() {
		return nil, nil
	}
	if h.BaseSequence < 0 {
		// An idempotent batch always carries a sequence.
		return nil, kerr.InvalidRecord
	}
	e := p.m[h.ProducerID]
	if e == nil {
		return nil, nil // unknown producer: any sequence (KIP-360)
	}
	if h.ProducerEpoch == e.Epoch {
		first, last := h.BaseSequence, h.LastSequence()
		for i := range e.Batches {
			if b := &e.Batches[i]; b.FirstSeq == first && b.LastSeq == last {
				m := *b
				return &m, nil
			}
		}
	}
	if h.ProducerEpoch < e.Epoch {
		return nil, kerr.InvalidProducerEpoch
	}
	if h.ProducerEpoch > e.Epoch {
		if h.BaseSequence != 0 {
			return nil, kerr.OutOfOrderSequenceNumber
		}
		return nil, nil
	}
	if last := e.LastSeq(); last != record.NoSequence && !inSequence(last, h.BaseSequence) {
		return nil, kerr.OutOfOrderSequenceNumber
	}
	return nil, nil
}

// inSequence reports whether next follows last (Kafka wraps sequences at MaxInt32).
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == int32(^uint32(0)>>1))
}

// Update records a batch that is now in the log (h carries its assigned
// base offset). Used after a leader append and when rebuilding from the
// log; it does not check sequences (the log is the truth). timestamp is the
// batch's max timestamp in ms.
func (p *Producers) Update(h *record.Header, timestamp int64) {
	if !h.HasProducerID() || h.IsControl() {
		return
	}
	e := p.m[h.ProducerID]
	if e == nil {
		e = &ProducerEntry{Epoch: h.ProducerEpoch}
		p.m[h.ProducerID] = e
	}
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
}

// TruncateTo forgets batches at or above offset (after log truncation) and
// producers left with no batch. Kafka rebuilds from a snapshot instead; a
// truncated partition may re-accept a retry, which is what Kafka's follower
// truncation also allows.
func (p *Producers) TruncateTo(offset int64) {
	for id, e := range p.m {
		n := 0
		for _, b := range e.Batches {
			if b.LastOffset < offset {
				e.Batches[n] = b
				n++
			}
		}
		e.Batches = e.Batches[:n]
		if n == 0 {
			delete(p.m, id)
		}
	}
}
