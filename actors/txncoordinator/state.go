package txncoordinator

import (
	"fmt"
	"math"
	"sort"
)

// State is a transactional id's state, Kafka's TransactionState; the value
// is the id stored in TransactionLogValue.TransactionStatus.
type State int8

// The states of Kafka's TransactionMetadata (TransactionState.fromId).
const (
	Empty             State = 0 // no transaction; producer id and epoch initialised
	Ongoing           State = 1 // partitions added, no EndTxn yet
	PrepareCommit     State = 2 // EndTxn(commit) written; markers being sent
	PrepareAbort      State = 3 // EndTxn(abort) or a fence written; markers being sent
	CompleteCommit    State = 4 // every commit marker written
	CompleteAbort     State = 5 // every abort marker written
	Dead              State = 6 // being expired (transactional.id.expiration.ms)
	PrepareEpochFence State = 7 // in memory only: an ongoing transaction being fenced (epoch bump, then abort)
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

// String is Kafka's state name (DescribeTransactions, kafka-transactions.sh).
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// validPrevious is Kafka's TransactionState.validPreviousStates.
func (s State) validPrevious(prev State) bool {
	switch s {
	case Empty:
		return prev == Empty || prev == CompleteCommit || prev == CompleteAbort
	case Ongoing:
		return prev == Ongoing || prev == Empty || prev == CompleteCommit || prev == CompleteAbort
	case PrepareCommit:
		return prev == Ongoing
	case PrepareAbort:
		return prev == Ongoing || prev == PrepareEpochFence
	case CompleteCommit:
		return prev == PrepareCommit
	case CompleteAbort:
		return prev == PrepareAbort
	case Dead:
		return prev == Empty || prev == CompleteAbort || prev == CompleteCommit
	case PrepareEpochFence:
		return prev == Ongoing
	}
	return false
}

// noProducerEpoch is RecordBatch.NO_PRODUCER_EPOCH; noProducerID NO_PRODUCER_ID.
const (
	noProducerEpoch int16 = -1
	noProducerID    int64 = -1
)

// epochExhausted is TransactionMetadata.isEpochExhausted: the last two
// epochs are kept for the fence and the bump that follows it.
func epochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

// TopicPartition names a partition of a transaction.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Transit is the state a transactional id moves to once its record is in
// __transaction_state (Kafka's TxnTransitMetadata): what is written, and
// what the metadata becomes when the append succeeds. Timestamps are unix
// milliseconds, TimeoutMs transaction.timeout.ms of the producer.
type Transit struct {
	ProducerID        int64
	LastProducerID    int64
	ProducerEpoch     int16
	LastProducerEpoch int16
	TimeoutMs         int32
	State             State
	Partitions        []TopicPartition // sorted
	StartTimestamp    int64            // -1 when no transaction is open
	UpdateTimestamp   int64
}

// Metadata is one transactional id's state (Kafka's TransactionMetadata).
// It is owned by its partition's Core; pending is the state an append in
// flight will move it to (Kafka's pendingState), and while one is pending
// no other transition starts.
type Metadata struct {
	TransactionalID   string
	ProducerID        int64
	LastProducerID    int64
	ProducerEpoch     int16
	LastProducerEpoch int16
	TimeoutMs         int32
	State             State
	Partitions        map[TopicPartition]struct{}
	StartTimestamp    int64 // unix ms, -1 when none
	UpdateTimestamp   int64 // unix ms

	pending    State
	hasPending bool
	// failedEpochFence: an epoch bump of a fence was not written; the next
	// fence does not bump again (Kafka's hasFailedEpochFence).
	failedEpochFence bool
}

// Pending is the state an append in flight moves the metadata to.
func (m *Metadata) Pending() (State, bool) { return m.pending, m.hasPending }

func (m *Metadata) sortedPartitions() []TopicPartition {
	out := make([]TopicPartition, 0, len(m.Partitions))
	for tp := range m.Partitions {
		out = append(out, tp)
	}
	sortPartitions(out)
	return out
}

func sortPartitions(ps []TopicPartition) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Topic != ps[j].Topic {
			return ps[i].Topic < ps[j].Topic
		}
		return ps[i].Partition < ps[j].Partition
	})
}

// errIllegalTransition is a programming error of the core (Kafka throws
// IllegalStateException); the actor's supervisor restarts it from the log.
type errIllegalTransition struct{ msg string }

func (e errIllegalTransition) Error() string { return "txncoordinator: " + e.msg }

func illegal(format string, args ...any) { panic(errIllegalTransition{fmt.Sprintf(format, args...)}) }

// prepareTransition is Kafka's prepareTransitionTo: it checks the move and
// marks it pending.
func (m *Metadata) prepareTransition(t Transit) Transit {
	if m.hasPending {
		illegal("%s: transition to %s while %s is pending", m.TransactionalID, t.State, m.pending)
	}
	if t.ProducerID < 0 {
		illegal("%s: illegal producer id %d", m.TransactionalID, t.ProducerID)
	}
	if t.State != Dead && t.ProducerEpoch < 0 {
		illegal("%s: illegal producer epoch %d", m.TransactionalID, t.ProducerEpoch)
	}
	if !t.State.validPrevious(m.State) {
		illegal("%s: %s is not a valid next state of %s", m.TransactionalID, t.State, m.State)
	}
	t.LastProducerID = m.ProducerID
	m.pending, m.hasPending = t.State, true
	return t
}

func (m *Metadata) transit(state State, pid int64, epoch, lastEpoch int16, timeout int32, parts []TopicPartition, start, now int64) Transit {
	return m.prepareTransition(Transit{ProducerID: pid, ProducerEpoch: epoch, LastProducerEpoch: lastEpoch, TimeoutMs: timeout,
		State: state, Partitions: parts, StartTimestamp: start, UpdateTimestamp: now})
}

// prepareFenceProducerEpoch bumps the epoch (unless a bump already failed)
// on the way to aborting the ongoing transaction.
func (m *Metadata) prepareFenceProducerEpoch() Transit {
	if m.ProducerEpoch == math.MaxInt16 {
		illegal("%s: cannot fence producer epoch %d", m.TransactionalID, m.ProducerEpoch)
	}
	e := m.ProducerEpoch
	if !m.failedEpochFence {
		e++
	}
	return m.transit(PrepareEpochFence, m.ProducerID, e, noProducerEpoch, m.TimeoutMs, m.sortedPartitions(), m.StartTimestamp, m.UpdateTimestamp)
}

// prepareIncrementProducerEpoch is InitProducerId's epoch bump; expected
// is the producer's current epoch (KIP-360) when it sent one.
func (m *Metadata) prepareIncrementProducerEpoch(timeout int32, expected *int16, now int64) (Transit, int16) {
	if epochExhausted(m.ProducerEpoch) {
		// Only reached with an expected epoch other than the current one
		// (the caller rotates the producer id otherwise). Kafka throws an
		// IllegalStateException here; a client's request must not crash
		// the coordinator: a retry of the last bump gets it again, anything
		// else is fenced.
		if expected != nil && *expected == m.LastProducerEpoch {
			return m.transit(Empty, m.ProducerID, m.ProducerEpoch, m.LastProducerEpoch, timeout, nil, -1, now), 0
		}
		return Transit{}, codeProducerFenced
	}
	bumped := m.ProducerEpoch + 1
	next, last := bumped, noProducerEpoch
	if expected != nil {
		switch {
		case m.ProducerEpoch == noProducerEpoch || *expected == m.ProducerEpoch:
			next, last = bumped, m.ProducerEpoch
		case *expected == m.LastProducerEpoch:
			// A retry of a bump whose answer was lost: the same epoch again.
			next, last = m.ProducerEpoch, m.LastProducerEpoch
		default:
			return Transit{}, codeProducerFenced
		}
	}
	return m.transit(Empty, m.ProducerID, next, last, timeout, nil, -1, now), 0
}

// prepareProducerIDRotation moves to a new producer id at epoch 0 once the
// old one's epochs are exhausted.
func (m *Metadata) prepareProducerIDRotation(pid int64, timeout int32, now int64, recordLast bool) Transit {
	if m.State == Ongoing || m.State == PrepareAbort || m.State == PrepareCommit {
		illegal("%s: cannot rotate producer ids with a transaction pending", m.TransactionalID)
	}
	last := noProducerEpoch
	if recordLast {
		last = m.ProducerEpoch
	}
	return m.transit(Empty, pid, 0, last, timeout, nil, -1, now)
}

// prepareAddPartitions opens (or extends) the transaction.
func (m *Metadata) prepareAddPartitions(add []TopicPartition, now int64) Transit {
	start := m.StartTimestamp
	switch m.State {
	case Empty, CompleteAbort, CompleteCommit:
		start = now
	}
	set := make(map[TopicPartition]struct{}, len(m.Partitions)+len(add))
	for tp := range m.Partitions {
		set[tp] = struct{}{}
	}
	for _, tp := range add {
		set[tp] = struct{}{}
	}
	parts := make([]TopicPartition, 0, len(set))
	for tp := range set {
		parts = append(parts, tp)
	}
	sortPartitions(parts)
	return m.transit(Ongoing, m.ProducerID, m.ProducerEpoch, m.LastProducerEpoch, m.TimeoutMs, parts, start, now)
}

func (m *Metadata) prepareAbortOrCommit(s State, now int64) Transit {
	return m.transit(s, m.ProducerID, m.ProducerEpoch, m.LastProducerEpoch, m.TimeoutMs, m.sortedPartitions(), m.StartTimestamp, now)
}

// prepareComplete is the move to CompleteCommit/CompleteAbort once every
// marker is written.
func (m *Metadata) prepareComplete(now int64) Transit {
	s := CompleteAbort
	if m.State == PrepareCommit {
		s = CompleteCommit
	}
	m.failedEpochFence = false
	return m.transit(s, m.ProducerID, m.ProducerEpoch, m.LastProducerEpoch, m.TimeoutMs, nil, m.StartTimestamp, now)
}

// prepareDead is the move of an expired transactional id whose tombstone
// is being written.
func (m *Metadata) prepareDead() Transit {
	return m.transit(Dead, m.ProducerID, m.ProducerEpoch, m.LastProducerEpoch, m.TimeoutMs, nil, m.StartTimestamp, m.UpdateTimestamp)
}

// completeTransition applies t once its record is in the log (Kafka's
// completeTransitionTo, with its consistency checks).
func (m *Metadata) completeTransition(t Transit) {
	if !m.hasPending || m.pending != t.State {
		illegal("%s: completing %s without it pending (pending %s)", m.TransactionalID, t.State, m.pending)
	}
	sameEpoch := t.ProducerEpoch == m.ProducerEpoch && t.ProducerID == m.ProducerID
	switch t.State {
	case Empty:
		bump := t.ProducerEpoch == m.ProducerEpoch+1 || (t.ProducerEpoch == 0 && t.ProducerID != m.ProducerID)
		if (m.ProducerEpoch != t.ProducerEpoch && !bump) || len(t.Partitions) != 0 || t.StartTimestamp != -1 {
			illegal("%s: bad transition to Empty", m.TransactionalID)
		}
		m.TimeoutMs, m.ProducerEpoch, m.LastProducerEpoch = t.TimeoutMs, t.ProducerEpoch, t.LastProducerEpoch
		m.ProducerID, m.LastProducerID = t.ProducerID, t.LastProducerID
	case Ongoing:
		if !sameEpoch || m.TimeoutMs != t.TimeoutMs || !subset(m.Partitions, t.Partitions) {
			illegal("%s: bad transition to Ongoing", m.TransactionalID)
		}
		m.StartTimestamp = t.StartTimestamp
		for _, tp := range t.Partitions {
			m.Partitions[tp] = struct{}{}
		}
	case PrepareCommit, PrepareAbort:
		if !sameEpoch || m.TimeoutMs != t.TimeoutMs || m.StartTimestamp != t.StartTimestamp || len(m.Partitions) != len(t.Partitions) || !subset(m.Partitions, t.Partitions) {
			illegal("%s: bad transition to %s", m.TransactionalID, t.State)
		}
	case CompleteCommit, CompleteAbort:
		if !sameEpoch || m.TimeoutMs != t.TimeoutMs || t.StartTimestamp == -1 {
			illegal("%s: bad transition to %s", m.TransactionalID, t.State)
		}
		m.StartTimestamp = t.StartTimestamp
		clear(m.Partitions)
	default:
		illegal("%s: %s is never completed", m.TransactionalID, t.State)
	}
	m.UpdateTimestamp = t.UpdateTimestamp
	m.hasPending = false
	m.State = t.State
}

func subset(have map[TopicPartition]struct{}, of []TopicPartition) bool {
	in := make(map[TopicPartition]struct{}, len(of))
	for _, tp := range of {
		in[tp] = struct{}{}
	}
	for tp := range have {
		if _, ok := in[tp]; !ok {
			return false
		}
	}
	return true
}
