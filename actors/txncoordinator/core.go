package txncoordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka error codes the core answers with.
var (
	codeNone                   int16 = 0
	codeProducerFenced               = kerr.ProducerFenced.Code
	codeInvalidProducerIDMap         = kerr.InvalidProducerIDMapping.Code
	codeConcurrentTransactions       = kerr.ConcurrentTransactions.Code
	codeInvalidTxnState              = kerr.InvalidTxnState.Code
	codeNotCoordinator               = kerr.NotCoordinator.Code
	codeCoordinatorNotAvail          = kerr.CoordinatorNotAvailable.Code
	codeTransactionAbortable         = kerr.TransactionAbortable.Code
)

// Core is the pure state of one loaded __transaction_state partition: the
// transactional ids it coordinates, at coordinator epoch Epoch (the
// partition's leader epoch when it was loaded), and the decisions of
// Kafka's TransactionCoordinator and TransactionStateManager over them, in
// Kafka's order of checks. It has no goroutines, clocks or I/O: times come
// in as arguments (unix ms), answers go out through callbacks, and
// persistence, marker sends and producer id allocation are effects its
// owner takes (TakeWrites, TakeMarkers, TakeIDRequests, TakeDelayed),
// performs, and feeds back through the callbacks they carry.
type Core struct {
	Partition int32
	Epoch     int32
	txns      map[string]*Metadata
	// completing are the transactions whose markers are being sent, by id
	// (Kafka's transactionsWithPendingMarkers): each holds the transition
	// to CompleteCommit/CompleteAbort written once every partition of the
	// metadata has its marker.
	completing map[string]*completion

	writes  []*Write
	markers []*MarkerSend
	ids     []*IDRequest
	delayed []func(now int64)
	// markersDone are the transactions whose last marker was written
	// since the owner last took them (TakeMarkersDone), for its metrics.
	markersDone []MarkersDone
	// appendRetries counts completion records waiting for their retry
	// backoff after the coordinator log was unavailable (Kafka's
	// TransactionMarkerChannelManager txnLogAppendRetryQueue).
	appendRetries int
}

// MarkersDone reports that every partition of one transaction has its
// marker; pc is the completion its MarkerSends (retries included)
// carried, so the owner can match it to when it started sending.
type MarkersDone struct {
	TransactionalID string
	Commit          bool
	pc              *completion
}

type completion struct {
	commit bool
	final  Transit
}

// NewCore returns the core of partition p loaded at coordinator epoch
// epoch with the transactional ids a Loader found. Transactions found in
// PrepareCommit or PrepareAbort get their markers sent again and are then
// completed (TransactionStateManager.loadTransactionsForTxnTopicPartition).
func NewCore(p, epoch int32, loaded map[string]*Metadata, now int64) *Core {
	c := &Core{Partition: p, Epoch: epoch, txns: map[string]*Metadata{}, completing: map[string]*completion{}}
	for id, m := range loaded {
		if m.Partitions == nil {
			m.Partitions = map[TopicPartition]struct{}{}
		}
		c.txns[id] = m
	}
	for _, m := range c.txns {
		if m.State == PrepareCommit || m.State == PrepareAbort {
			c.sendMarkers(m, m.State == PrepareCommit, m.prepareComplete(now))
		}
	}
	return c
}

// Get is the metadata of a transactional id (nil if unknown). Callers
// must not change it.
func (c *Core) Get(id string) *Metadata { return c.txns[id] }

// Len is the number of transactional ids coordinated.
func (c *Core) Len() int { return len(c.txns) }

// Write is one record the core asks to append to its partition of
// __transaction_state (Key(TransactionalID), Value(Transit)); Done must be
// called exactly once with the append's outcome: 0 once it is committed
// (acks=-1), else the partition's Kafka error code.
type Write struct {
	TransactionalID string
	Transit         Transit
	// Tombstone: the record's value is null (an expired transactional
	// id, transactional.id.expiration.ms); Transit is then not written.
	Tombstone bool
	done      func(appendCode int16)
}

// Done feeds the append's outcome back.
func (w *Write) Done(appendCode int16) { w.done(appendCode) }

// MarkerSend asks for WriteTxnMarkers of one transaction to the leaders of
// Partitions; Done (or Failed, or Gone) feeds the outcome back. Delay is
// set on a retry: the owner waits its marker retry backoff first.
type MarkerSend struct {
	TransactionalID  string
	ProducerID       int64
	ProducerEpoch    int16
	CoordinatorEpoch int32
	Commit           bool
	Partitions       []TopicPartition
	Retry            bool
	c                *Core
	pc               *completion
}

// IDRequest asks for a new producer id (the broker's allocator, which may
// reserve a block in ZooKeeper); Done feeds it back (err != nil: none).
type IDRequest struct {
	done func(now int64, id int64, err error)
}

// Done feeds the allocated id back.
func (r *IDRequest) Done(now, id int64, err error) { r.done(now, id, err) }

// TakeWrites hands the owner the appends asked for since the last call, in
// order.
func (c *Core) TakeWrites() []*Write { w := c.writes; c.writes = nil; return w }

// TakeMarkers hands the owner the marker sends asked for since the last call.
func (c *Core) TakeMarkers() []*MarkerSend { m := c.markers; c.markers = nil; return m }

// TakeIDRequests hands the owner the producer id allocations asked for.
func (c *Core) TakeIDRequests() []*IDRequest { r := c.ids; c.ids = nil; return r }

// TakeMarkersDone hands the owner the transactions whose markers were all
// written since the last call.
func (c *Core) TakeMarkersDone() []MarkersDone { d := c.markersDone; c.markersDone = nil; return d }

// TakeDelayed hands the owner what is to run after its retry backoff
// (completion appends that found the coordinator unavailable).
func (c *Core) TakeDelayed() []func(now int64) { d := c.delayed; c.delayed = nil; return d }

// appendCodeToCoordinator maps a __transaction_state append error to what
// the coordinator answers (TransactionStateManager.appendTransactionToLog).
func appendCodeToCoordinator(code int16) int16 {
	switch code {
	case 0:
		return 0
	case kerr.UnknownTopicOrPartition.Code, kerr.NotEnoughReplicas.Code, kerr.NotEnoughReplicasAfterAppend.Code, kerr.RequestTimedOut.Code:
		return codeCoordinatorNotAvail
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code:
		return codeNotCoordinator
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code:
		return kerr.UnknownServerError.Code
	}
	return code
}

// appendTransaction queues the record of t for id and runs cb with the
// coordinator's code once it is appended: on success the metadata
// completes the transition; on failure the pending transition is dropped
// unless retry(code) keeps it for the caller to try again.
func (c *Core) appendTransaction(id string, t Transit, retry func(int16) bool, cb func(code int16)) {
	c.writes = append(c.writes, &Write{TransactionalID: id, Transit: t, done: func(appendCode int16) {
		code := appendCodeToCoordinator(appendCode)
		m := c.txns[id]
		if m == nil {
			// Expired meanwhile: nothing to move.
			cb(codeNotCoordinator)
			return
		}
		if code == 0 {
			m.completeTransition(t)
		} else if retry == nil || !retry(code) {
			m.hasPending = false
		}
		cb(code)
	}})
}

// ProducerIDAndEpoch is the producer's current id and epoch sent with
// InitProducerId v3+ (KIP-360).
type ProducerIDAndEpoch struct {
	ProducerID int64
	Epoch      int16
}

// InitProducerID is TransactionCoordinator.handleInitProducerId for a
// loaded, non-empty transactional id with a valid timeout (the caller
// checked those): reply gets the producer id and epoch, or an error code
// (CONCURRENT_TRANSACTIONS, PRODUCER_FENCED, COORDINATOR_NOT_AVAILABLE…,
// with id -1 and epoch -1). An ongoing transaction is first fenced and
// aborted and the answer is CONCURRENT_TRANSACTIONS: the producer retries
// and gets the next epoch.
func (c *Core) InitProducerID(id string, timeoutMs int32, expected *ProducerIDAndEpoch, now int64, reply func(pid int64, epoch int16, code int16)) {
	c.initProducerID(id, timeoutMs, expected, now, -1, reply)
}

func (c *Core) initProducerID(id string, timeoutMs int32, expected *ProducerIDAndEpoch, now, allocated int64, reply func(pid int64, epoch int16, code int16)) {
	fail := func(code int16) { reply(-1, -1, code) }
	// needID asks the owner for a producer id and runs the request again
	// with it (the state may have changed meanwhile; every check is redone).
	needID := func() {
		c.ids = append(c.ids, &IDRequest{done: func(now, pid int64, err error) {
			if err != nil {
				fail(codeCoordinatorNotAvail)
				return
			}
			c.initProducerID(id, timeoutMs, expected, now, pid, reply)
		}})
	}
	m := c.txns[id]
	if m == nil {
		if allocated < 0 {
			needID()
			return
		}
		m = &Metadata{TransactionalID: id, ProducerID: allocated, LastProducerID: noProducerID, ProducerEpoch: noProducerEpoch,
			LastProducerEpoch: noProducerEpoch, TimeoutMs: timeoutMs, State: Empty, Partitions: map[TopicPartition]struct{}{},
			StartTimestamp: -1, UpdateTimestamp: now}
		c.txns[id] = m
		allocated = -1 // used
	}
	validPID := func(e ProducerIDAndEpoch) bool {
		return m.ProducerEpoch == noProducerEpoch || e.ProducerID == m.ProducerID ||
			(e.ProducerID == m.LastProducerID && epochExhausted(e.Epoch))
	}
	switch {
	case m.hasPending:
		fail(codeConcurrentTransactions)
		return
	case expected != nil && !validPID(*expected):
		fail(codeProducerFenced)
		return
	}
	var t Transit
	switch m.State {
	case PrepareAbort, PrepareCommit:
		fail(codeConcurrentTransactions)
		return
	case CompleteAbort, CompleteCommit, Empty:
		if epochExhausted(m.ProducerEpoch) && (expected == nil || expected.Epoch == m.ProducerEpoch) {
			if allocated < 0 {
				needID()
				return
			}
			t = m.prepareProducerIDRotation(allocated, timeoutMs, now, expected != nil)
		} else {
			var exp *int16
			if expected != nil {
				exp = &expected.Epoch
			}
			var code int16
			if t, code = m.prepareIncrementProducerEpoch(timeoutMs, exp, now); code != 0 {
				fail(code)
				return
			}
		}
	case Ongoing:
		// Fence the producer and abort its transaction; the client retries
		// on CONCURRENT_TRANSACTIONS and then gets the epoch after this one.
		f := m.prepareFenceProducerEpoch()
		c.endTransaction(id, f.ProducerID, f.ProducerEpoch, false, false, now, func(code int16) {
			if code == 0 {
				code = codeConcurrentTransactions
			}
			fail(code)
		})
		return
	default:
		illegal("%s: InitProducerId found state %s", id, m.State)
	}
	c.appendTransaction(id, t, nil, func(code int16) {
		if code != 0 {
			fail(code)
			return
		}
		reply(t.ProducerID, t.ProducerEpoch, 0)
	})
}

// AddPartitions is TransactionCoordinator.handleAddPartitionsToTransaction
// (AddPartitionsToTxn, and AddOffsetsToTxn with the group's
// __consumer_offsets partition) for a loaded, non-empty transactional id.
func (c *Core) AddPartitions(id string, pid int64, epoch int16, parts []TopicPartition, now int64, reply func(code int16)) {
	m := c.txns[id]
	switch {
	case m == nil, m.ProducerID != pid:
		reply(codeInvalidProducerIDMap)
		return
	case m.ProducerEpoch != epoch:
		reply(codeProducerFenced)
		return
	case m.hasPending, m.State == PrepareCommit, m.State == PrepareAbort:
		reply(codeConcurrentTransactions)
		return
	case m.State == Ongoing && containsAll(m.Partitions, parts):
		reply(0) // already in the transaction: nothing to write
		return
	}
	c.appendTransaction(id, m.prepareAddPartitions(parts, now), nil, reply)
}

func containsAll(have map[TopicPartition]struct{}, parts []TopicPartition) bool {
	for _, tp := range parts {
		if _, ok := have[tp]; !ok {
			return false
		}
	}
	return true
}

// VerifyPartitions is TransactionCoordinator.handleVerifyPartitionsInTransaction
// (AddPartitionsToTxn v4+ VerifyOnly, KIP-890 part 1): per partition 0 if
// it is in the producer's ongoing transaction, TRANSACTION_ABORTABLE if
// not; or one code for them all (INVALID_PRODUCER_ID_MAPPING,
// PRODUCER_FENCED, CONCURRENT_TRANSACTIONS). Nothing is written.
func (c *Core) VerifyPartitions(id string, pid int64, epoch int16, parts []TopicPartition) map[TopicPartition]int16 {
	out := make(map[TopicPartition]int16, len(parts))
	all := func(code int16) map[TopicPartition]int16 {
		for _, tp := range parts {
			out[tp] = code
		}
		return out
	}
	m := c.txns[id]
	switch {
	case m == nil, m.ProducerID != pid:
		return all(codeInvalidProducerIDMap)
	case m.ProducerEpoch != epoch:
		return all(codeProducerFenced)
	case m.State == PrepareCommit, m.State == PrepareAbort:
		return all(codeConcurrentTransactions)
	}
	for _, tp := range parts {
		if _, ok := m.Partitions[tp]; ok {
			out[tp] = 0
		} else {
			out[tp] = codeTransactionAbortable
		}
	}
	return out
}

// EndTxn is TransactionCoordinator.handleEndTransaction for a loaded,
// non-empty transactional id: PrepareCommit/PrepareAbort is written, the
// client is answered, and the markers go out; the transaction completes
// once every partition has its marker.
func (c *Core) EndTxn(id string, pid int64, epoch int16, commit bool, now int64, reply func(code int16)) {
	c.endTransaction(id, pid, epoch, commit, true, now, reply)
}

func (c *Core) endTransaction(id string, pid int64, epoch int16, commit, fromClient bool, now int64, reply func(code int16)) {
	m := c.txns[id]
	if m == nil {
		reply(codeInvalidProducerIDMap)
		return
	}
	invalid := func() { reply(codeInvalidTxnState) }
	epochFence := false
	switch {
	case m.ProducerID != pid:
		reply(codeInvalidProducerIDMap)
		return
	case (fromClient && epoch != m.ProducerEpoch) || epoch < m.ProducerEpoch:
		reply(codeProducerFenced)
		return
	case m.hasPending && m.pending != PrepareEpochFence:
		reply(codeConcurrentTransactions)
		return
	}
	var t Transit
	switch m.State {
	case Ongoing:
		next := PrepareAbort
		if commit {
			next = PrepareCommit
		}
		if next == PrepareAbort && m.hasPending && m.pending == PrepareEpochFence {
			// The fence's bump goes into the abort record (and stays in
			// memory even if that write fails: failedEpochFence).
			epochFence = true
			m.hasPending = false
			m.ProducerEpoch = epoch
			m.LastProducerEpoch = noProducerEpoch
		}
		t = m.prepareAbortOrCommit(next, now)
	case CompleteCommit:
		if commit {
			reply(0)
		} else {
			invalid()
		}
		return
	case CompleteAbort:
		if !commit {
			reply(0)
		} else {
			invalid()
		}
		return
	case PrepareCommit:
		if commit {
			reply(codeConcurrentTransactions)
		} else {
			invalid()
		}
		return
	case PrepareAbort:
		if !commit {
			reply(codeConcurrentTransactions)
		} else {
			invalid()
		}
		return
	case Empty:
		invalid()
		return
	default:
		illegal("%s: EndTxn found state %s", id, m.State)
	}
	c.appendTransaction(id, t, nil, func(code int16) {
		if code != 0 {
			if epochFence {
				m.failedEpochFence = true
			}
			reply(code)
			return
		}
		// Written: recheck as Kafka does before sending the markers.
		switch {
		case m.ProducerID != pid:
			reply(codeInvalidProducerIDMap)
			return
		case m.ProducerEpoch != epoch:
			reply(codeProducerFenced)
			return
		case m.hasPending:
			reply(codeConcurrentTransactions)
			return
		case (m.State == PrepareCommit) != commit || (m.State != PrepareCommit && m.State != PrepareAbort):
			invalid()
			return
		}
		reply(0)
		c.sendMarkers(m, commit, m.prepareComplete(now))
	})
}

// sendMarkers starts the markers of m's transaction (prepared: final is
// pending) and completes it at once when it has no partitions
// (TransactionMarkerChannelManager.addTxnMarkersToSend).
func (c *Core) sendMarkers(m *Metadata, commit bool, final Transit) {
	pc := &completion{commit: commit, final: final}
	c.completing[m.TransactionalID] = pc
	if len(m.Partitions) > 0 {
		c.markers = append(c.markers, &MarkerSend{TransactionalID: m.TransactionalID, ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
			CoordinatorEpoch: c.Epoch, Commit: commit, Partitions: m.sortedPartitions(), c: c, pc: pc})
	}
	c.maybeComplete(m.TransactionalID)
}

// current reports whether s is still the marker send of its transaction's
// current completion (false once it was cancelled or superseded).
func (s *MarkerSend) current() (*Metadata, bool) {
	m := s.c.txns[s.TransactionalID]
	return m, m != nil && s.c.completing[s.TransactionalID] == s.pc
}

// Gone reports partitions whose leader is unknown because they no longer
// exist (deleted topics): they are dropped from the transaction, as Kafka
// skips them.
func (s *MarkerSend) Gone(parts []TopicPartition) {
	m, ok := s.current()
	if !ok {
		return
	}
	for _, tp := range parts {
		delete(m.Partitions, tp)
	}
	s.c.maybeComplete(s.TransactionalID)
}

// Failed reports that the request carrying parts got no response
// (connection error, leader unknown for now): they are sent again after the
// retry backoff.
func (s *MarkerSend) Failed(parts []TopicPartition) {
	if _, ok := s.current(); !ok || len(parts) == 0 {
		return
	}
	s.retry(parts)
}

func (s *MarkerSend) retry(parts []TopicPartition) {
	r := *s
	r.Partitions, r.Retry = parts, true
	s.c.markers = append(s.c.markers, &r)
}

// Done feeds back the WriteTxnMarkers response's code for each partition of
// one request (TransactionMarkerRequestCompletionHandler): 0 removes the
// partition from the transaction; retriable errors send it again;
// INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED stop sending
// this transaction's markers (a newer epoch has taken over);
// UNSUPPORTED_FOR_MESSAGE_FORMAT / UNSUPPORTED_VERSION drop the partition.
// Any other code is unexpected (Kafka fails the coordinator): the
// partition is retried. The transaction completes when its last partition
// is removed.
func (s *MarkerSend) Done(codes map[TopicPartition]int16) {
	m, ok := s.current()
	if !ok {
		return
	}
	var again []TopicPartition
	for _, tp := range sortedKeys(codes) {
		switch code := codes[tp]; code {
		case 0, kerr.UnsupportedForMessageFormat.Code, kerr.UnsupportedVersion.Code:
			delete(m.Partitions, tp)
		case kerr.InvalidProducerEpoch.Code, kerr.TransactionCoordinatorFenced.Code:
			delete(s.c.completing, s.TransactionalID)
			return
		default:
			again = append(again, tp)
		}
	}
	if len(again) > 0 {
		s.retry(again)
		return
	}
	s.c.maybeComplete(s.TransactionalID)
}

func sortedKeys(m map[TopicPartition]int16) []TopicPartition {
	out := make([]TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	sortPartitions(out)
	return out
}

// maybeComplete writes the completion of id once no partition awaits its
// marker; an unavailable coordinator log is retried after the backoff
// (TransactionMarkerChannelManager.tryAppendToLog).
func (c *Core) maybeComplete(id string) {
	pc := c.completing[id]
	m := c.txns[id]
	if pc == nil || m == nil || len(m.Partitions) > 0 {
		return
	}
	delete(c.completing, id)
	c.markersDone = append(c.markersDone, MarkersDone{TransactionalID: id, Commit: pc.commit, pc: pc})
	c.writeCompletion(id, pc.final)
}

func (c *Core) writeCompletion(id string, final Transit) {
	c.appendTransaction(id, final, func(code int16) bool { return code == codeCoordinatorNotAvail }, func(code int16) {
		if code == codeCoordinatorNotAvail {
			c.appendRetries++
			c.delayed = append(c.delayed, func(int64) {
				c.appendRetries--
				c.writeCompletion(id, final)
			})
		}
	})
}

// Completing reports whether id's markers are still being sent.
func (c *Core) Completing(id string) bool { return c.completing[id] != nil }

// AbortTimedOut fences and aborts every ongoing transaction older than its
// timeout with no transition pending (Kafka's abortTimedOutTransactions,
// run every transaction.abort.timed.out.transaction.cleanup.interval.ms):
// the epoch bump fences the zombie producer. It returns how many it
// started to abort.
func (c *Core) AbortTimedOut(now int64, done func(id string, code int16)) int {
	var ids []string
	for id, m := range c.txns {
		if !m.hasPending && m.State == Ongoing && m.StartTimestamp+int64(m.TimeoutMs) < now {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		m := c.txns[id]
		f := m.prepareFenceProducerEpoch()
		c.endTransaction(id, f.ProducerID, f.ProducerEpoch, false, false, now, func(code int16) {
			if done != nil {
				done(id, code)
			}
		})
	}
	return len(ids)
}

// ExpireTransactionalIDs writes tombstones for the transactional ids idle
// longer than expirationMs (transactional.id.expiration.ms): those in
// Empty, CompleteCommit or CompleteAbort with no transition pending whose
// last update is at least that old (TransactionStateManager.shouldExpire).
// Each is removed once its tombstone is written; a failed write leaves it
// as it was. It returns how many it started to expire.
func (c *Core) ExpireTransactionalIDs(now, expirationMs int64) int {
	n := 0
	for id, m := range c.txns {
		if m.hasPending || (m.State != Empty && m.State != CompleteCommit && m.State != CompleteAbort) || m.UpdateTimestamp > now-expirationMs {
			continue
		}
		t := m.prepareDead()
		n++
		c.writes = append(c.writes, &Write{TransactionalID: id, Transit: t, Tombstone: true, done: func(appendCode int16) {
			if c.txns[id] != m {
				return
			}
			if appendCode == 0 && m.hasPending && m.pending == Dead && m.ProducerEpoch == t.ProducerEpoch {
				delete(c.txns, id)
				return
			}
			m.hasPending = false
		}})
	}
	return n
}
