package txncoordinator

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors"
)

// Description is one transactional id as DescribeTransactions shows it.
type Description struct {
	ProducerID     int64
	ProducerEpoch  int16
	State          State
	TimeoutMs      int32
	StartTimestamp int64 // unix ms, -1 when no transaction is open
	Partitions     []TopicPartition
}

// Describe is TransactionCoordinator.handleDescribeTransactions on a
// loaded partition: ok is false for an unknown id (TRANSACTIONAL_ID_NOT_FOUND).
func (c *Core) Describe(id string) (Description, bool) {
	m := c.txns[id]
	if m == nil || m.State == Dead {
		return Description{}, false
	}
	return Description{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, State: m.State, TimeoutMs: m.TimeoutMs,
		StartTimestamp: m.StartTimestamp, Partitions: m.sortedPartitions()}, true
}

// ListFilter is ListTransactions' filters: producer ids and states (empty:
// all), and DurationMs ≥ 0 keeps only transactions running longer than
// that (KIP-994).
type ListFilter struct {
	ProducerIDs map[int64]bool
	States      map[State]bool
	DurationMs  int64
}

// Listed is one transactional id of a ListTransactions answer.
type Listed struct {
	TransactionalID string
	ProducerID      int64
	State           State
}

// List is TransactionStateManager.listTransactionStates over this
// partition's ids.
func (c *Core) List(f ListFilter, now int64) []Listed {
	var out []Listed
	for id, m := range c.txns {
		switch {
		case m.State == Dead:
		case len(f.ProducerIDs) > 0 && !f.ProducerIDs[m.ProducerID]:
		case len(f.States) > 0 && !f.States[m.State]:
		case f.DurationMs >= 0 && now-m.StartTimestamp <= f.DurationMs:
		default:
			out = append(out, Listed{TransactionalID: id, ProducerID: m.ProducerID, State: m.State})
		}
	}
	return out
}

// stateByName is TransactionState.fromName.
func stateByName(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return 0, false
}

// DescribeTransaction serves one transactional id of DescribeTransactions
// v0: INVALID_REQUEST for an empty id, NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, TRANSACTIONAL_ID_NOT_FOUND, or its state.
func (c *Coordinator) DescribeTransaction(transactionalID string, reply func(kmsg.DescribeTransactionsResponseTransactionState)) {
	fail := func(code int16) kmsg.DescribeTransactionsResponseTransactionState {
		s := kmsg.NewDescribeTransactionsResponseTransactionState()
		s.TransactionalID, s.ErrorCode = transactionalID, code
		s.ProducerID, s.ProducerEpoch, s.StartTimestamp = -1, -1, -1
		return s
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, reply, func() kmsg.DescribeTransactionsResponseTransactionState { return fail(codeCoordinatorNotAvail) })
	if transactionalID == "" {
		r(fail(kerr.InvalidRequest.Code))
		return
	}
	c.send(&txnRequest{partition: c.PartitionFor(transactionalID), id: transactionalID, api: "DescribeTransactions", fail: func(code int16) { r(fail(code)) },
		apply: func(core *Core, _ int64) {
			d, ok := core.Describe(transactionalID)
			if !ok {
				r(fail(kerr.TransactionalIDNotFound.Code))
				return
			}
			s := kmsg.NewDescribeTransactionsResponseTransactionState()
			s.TransactionalID, s.State, s.TimeoutMillis, s.StartTimestamp = transactionalID, d.State.String(), d.TimeoutMs, d.StartTimestamp
			s.ProducerID, s.ProducerEpoch = d.ProducerID, d.ProducerEpoch
			for _, tp := range d.Partitions {
				if n := len(s.Topics); n > 0 && s.Topics[n-1].Topic == tp.Topic {
					s.Topics[n-1].Partitions = append(s.Topics[n-1].Partitions, tp.Partition)
					continue
				}
				t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				t.Topic, t.Partitions = tp.Topic, []int32{tp.Partition}
				s.Topics = append(s.Topics, t)
			}
			r(s)
		}})
}

// listRequest asks the manager for every loaded partition's ids.
type listRequest struct {
	filter ListFilter
	reply  func(code int16, listed []Listed)
}

// partList asks one partition actor for its ids (loading: not loaded yet).
type partList struct {
	filter ListFilter
	reply  func(listed []Listed, loading bool)
}

// ListTransactions serves ListTransactions v0–v1 over the partitions loaded
// here: COORDINATOR_LOAD_IN_PROGRESS while any is loading; state names
// Kafka does not know are returned in unknown (and match nothing).
func (c *Coordinator) ListTransactions(states []string, producerIDs []int64, durationMs int64, reply func(code int16, unknown []string, listed []kmsg.ListTransactionsResponseTransactionState)) {
	f := ListFilter{ProducerIDs: map[int64]bool{}, States: map[State]bool{}, DurationMs: durationMs}
	var unknown []string
	for _, name := range states {
		if s, ok := stateByName(name); ok {
			f.States[s] = true
		} else {
			unknown = append(unknown, name)
		}
	}
	if len(states) > 0 && len(f.States) == 0 {
		f.States[Dead] = true // only unknown names: nothing matches (Dead is never listed)
	}
	for _, p := range producerIDs {
		f.ProducerIDs[p] = true
	}
	type res struct {
		code   int16
		listed []Listed
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, func(v res) {
		out := make([]kmsg.ListTransactionsResponseTransactionState, 0, len(v.listed))
		for _, l := range v.listed {
			s := kmsg.NewListTransactionsResponseTransactionState()
			s.TransactionalID, s.ProducerID, s.TransactionState = l.TransactionalID, l.ProducerID, l.State.String()
			out = append(out, s)
		}
		reply(v.code, unknown, out)
	}, func() res { return res{codeCoordinatorNotAvail, nil} })
	if c.ctx.Err() != nil {
		r(res{codeCoordinatorNotAvail, nil})
		return
	}
	c.sys.Root.Send(c.manager, &listRequest{filter: f, reply: func(code int16, l []Listed) { r(res{code, l}) }})
}

// list fans a ListTransactions out to the loaded partitions (on the manager).
func (m *manager) list(send func(lp *loadedPart, msg *partList), req *listRequest) {
	if len(m.parts) == 0 {
		req.reply(0, nil)
		return
	}
	var mu sync.Mutex
	left, loading := len(m.parts), false
	var all []Listed
	for _, lp := range m.parts {
		send(lp, &partList{filter: req.filter, reply: func(l []Listed, ld bool) {
			mu.Lock()
			all = append(all, l...)
			loading = loading || ld
			left--
			done := left == 0
			mu.Unlock()
			if !done {
				return
			}
			if loading {
				req.reply(kerr.CoordinatorLoadInProgress.Code, nil)
				return
			}
			req.reply(0, all)
		}})
	}
}
