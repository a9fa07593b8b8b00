package partition

import (
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage"
	"gregor/storage/record"
)

// Produce asks the partition actor to append one batch as leader.
type Produce struct {
	// Batch is one record batch already checked with record.Validate and
	// record.ValidateRecords on the connection goroutine. It may alias the
	// request buffer: the actor rewrites its base offset (and leader epoch,
	// and maybe log append time) in place before writing it.
	Batch  []byte
	Header record.Header // Batch's parsed header
	// Acks is the request's acks: 1 or -1 (acks=0 requests still get a
	// reply on Reply; the handler just does not wait for it).
	Acks int16
	// LogAppendTime: the topic has message.timestamp.type=LogAppendTime;
	// the actor stamps the batch with its clock (ms) when appending and
	// returns that time in ProduceResult.LogAppendTime.
	LogAppendTime bool
	// Reply receives exactly one result. It must have a free buffer slot.
	Reply chan<- ProduceResult
	// CorrelationID is the client request's correlation id, for actor
	// tracing (actors.Correlated); 0 when unknown.
	CorrelationID int32
	// Marker is set when Batch is a transaction marker (a control batch
	// built by the WriteTxnMarkers handler, one EndTxnMarker record): its
	// decoded record. The actor then checks it with Producers.CheckMarker
	// instead of the data-batch rules, and ends the producer's transaction
	// once it is appended. A control batch without Marker is refused
	// (INVALID_RECORD).
	Marker *record.EndTxn
	// TxnVerify is transaction.partition.verification.enable (KIP-890
	// part 1) for this produce: a client's transactional batch that would
	// open its producer's transaction here needs VerificationGuard from a
	// coordinator verification; without one the actor answers with
	// ProduceResult.VerifyGuard instead of appending (txn_verify.go).
	TxnVerify bool
	// VerificationGuard is the guard a verification confirmed (a
	// ProduceResult.VerifyGuard the coordinator then verified); 0 = none.
	VerificationGuard uint64

	// claim arbitrates between the actor starting the append and the
	// handler giving up (timeout): 0 open, 1 taken by the actor, 2 abandoned.
	claim atomic.Int32
	// released is closed by the actor once it no longer reads Batch (set
	// by Handle.Produce); closedRel guards the close (actor-only).
	released  chan struct{}
	closedRel bool

	// tr is what the actor did with the batch, for the trace event
	// (actor-only; TraceDetail reads it on the actor's goroutine).
	tr produceTrace
}

// Released is closed once the partition actor is done reading Batch
// (appended, refused, or failed). An acks=-1 produce that is waiting for
// replication has been released: a handler that times out may answer
// REQUEST_TIMED_OUT without waiting for Reply. nil before Handle.Produce.
func (p *Produce) Released() <-chan struct{} { return p.released }

func (p *Produce) release() {
	if p.released != nil && !p.closedRel {
		p.closedRel = true
		close(p.released)
	}
}

// Abandon tells the actor not to append this batch (the request timed out
// or the connection closed). It returns false when the actor has already
// started the append: the caller must then wait for the reply, because
// Batch (aliasing the request buffer) is still being read.
func (p *Produce) Abandon() bool { return p.claim.CompareAndSwap(0, 2) || p.claim.Load() == 2 }

// appendTime is the AppendOptions.LogAppendTime for this batch: now in ms,
// or -1 to keep CreateTime.
func (p *Produce) appendTime() int64 {
	if p.LogAppendTime {
		return time.Now().UnixMilli()
	}
	return -1
}

// take is the actor's side of Abandon: false means abandoned, skip it.
func (p *Produce) take() bool { return p.claim.CompareAndSwap(0, 1) }

// ProduceResult is the per-partition outcome of a Produce (the fields of
// Kafka's ProduceResponse partition).
type ProduceResult struct {
	Err            *kerr.Error // nil = success
	ErrorMessage   string      // detail for INVALID_RECORD (v8+)
	BaseOffset     int64       // offset of the batch's first record; -1 on error
	LogAppendTime  int64       // ms; -1 unless message.timestamp.type=LogAppendTime
	LogStartOffset int64       // the log start offset after the append (v5+)
	// VerifyGuard, when not 0, means the batch was not appended because
	// it must first be verified with the transaction coordinator (KIP-890,
	// Produce.TxnVerify): send it again with this VerificationGuard once
	// verified. Err is then INVALID_TXN_STATE, so a caller unaware of
	// verification never takes it for success.
	VerifyGuard uint64
}

// Crash makes a partition actor panic (fault injection and tests).
type Crash struct{ Reason string }

// becomeLeader applies a new LeaderAndIsr state to a running actor.
type applyState struct {
	state LeaderAndIsr
	done  chan *kerr.Error
}

// setConfig changes the topic config of a running partition.
type setConfig struct{ cfg storage.LogConfig }

// logStartMoved: retention may have deleted segments of the partition's
// log; the actor re-reads its log start offset and publishes it.
type logStartMoved struct{}

// setMinIsr changes min.insync.replicas of a running partition.
type setMinIsr struct{ n int }

// deleteRecords advances the log start offset (DeleteRecords API).
type deleteRecords struct {
	offset int64
	done   chan DeleteRecordsResult
}

// DeleteRecordsResult is the outcome of a DeleteRecords on one partition.
type DeleteRecordsResult struct {
	Err          *kerr.Error
	LowWatermark int64 // the log start offset afterwards
}

// TraceCorrelationID implements actors.Correlated.
func (p *Produce) TraceCorrelationID() int32 { return p.CorrelationID }
