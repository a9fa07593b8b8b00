package txncoordinator

import (
	"context"
	"sync"
	"time"

	"gregor/actors"
)

// Stats is the coordinator's state for the broker's metrics, summed over
// the __transaction_state partitions loaded here.
type Stats struct {
	// ByState counts transactional ids by Kafka's state name (Empty,
	// Ongoing, PrepareCommit, PrepareAbort, CompleteCommit,
	// CompleteAbort, PrepareEpochFence; Dead while a tombstone is being
	// written). Every state is present, 0 when none.
	ByState map[string]int
	// Active counts open transactions: Ongoing, PrepareCommit,
	// PrepareAbort and PrepareEpochFence (begun and not yet complete).
	Active int
	// PendingMarkers counts transactions whose markers are being sent
	// (Kafka's transactionsWithPendingMarkers).
	PendingMarkers int
	// UnknownDestination counts markers (one per transaction and
	// partition) waiting for their partition to have a leader (Kafka's
	// TransactionMarkerChannelManager UnknownDestinationQueueSize).
	UnknownDestination int
	// LogAppendRetry counts completion records waiting to be appended
	// again after __transaction_state was unavailable (Kafka's
	// TransactionMarkerChannelManager LogAppendRetryQueueSize).
	LogAppendRetry int
	// Loaded and Loading count partitions loaded here and still loading.
	Loaded, Loading int
}

// allStates are the states Stats.ByState reports.
var allStates = []State{Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence}

func newStats() Stats {
	s := Stats{ByState: make(map[string]int, len(allStates))}
	for _, st := range allStates {
		s.ByState[st.String()] = 0
	}
	return s
}

func (s *Stats) add(o Stats) {
	for k, v := range o.ByState {
		s.ByState[k] += v
	}
	s.Active += o.Active
	s.PendingMarkers += o.PendingMarkers
	s.UnknownDestination += o.UnknownDestination
	s.LogAppendRetry += o.LogAppendRetry
	s.Loaded += o.Loaded
	s.Loading += o.Loading
}

// Stats counts the core's transactional ids by state, its transactions
// with markers pending and its completions waiting to be retried (one
// pass over the ids: for a scrape, not for every request).
func (c *Core) Stats() Stats {
	s := newStats()
	for _, m := range c.txns {
		st := m.State
		if m.hasPending && m.pending == Dead {
			st = Dead
		}
		s.ByState[st.String()]++
		switch st {
		case Ongoing, PrepareCommit, PrepareAbort, PrepareEpochFence:
			s.Active++
		}
	}
	s.PendingMarkers = len(c.completing)
	s.LogAppendRetry = c.appendRetries
	s.Loaded = 1
	return s
}

// statsRequest asks the manager for every loaded partition's Stats.
type statsRequest struct{ reply func(Stats) }

// partStats asks one partition actor for its Stats.
type partStats struct{ reply func(Stats) }

// Stats gathers the coordinator's Stats from its partition actors (for
// the admin listener's metrics). It returns ctx's error if they do not
// all answer before ctx ends; it never blocks an actor.
func (c *Coordinator) Stats(ctx context.Context) (Stats, error) {
	if c.ctx.Err() != nil {
		return newStats(), nil
	}
	ch := make(chan Stats, 1)
	c.sys.Root.Send(c.manager, &statsRequest{reply: func(s Stats) { ch <- s }})
	select {
	case s := <-ch:
		return s, nil
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	case <-c.ctx.Done():
		return newStats(), nil
	}
}

// stats fans a statsRequest out to the loaded partitions (on the manager);
// the last answer replies.
func (m *manager) stats(send func(lp *loadedPart, msg *partStats), req *statsRequest) {
	if len(m.parts) == 0 {
		req.reply(newStats())
		return
	}
	var mu sync.Mutex
	left, all := len(m.parts), newStats()
	for _, lp := range m.parts {
		send(lp, &partStats{reply: func(s Stats) {
			mu.Lock()
			all.add(s)
			left--
			done := left == 0
			mu.Unlock()
			if done {
				req.reply(all)
			}
		}})
	}
}

// markerKey is one transaction's marker for one partition, in the
// partition actor's bookkeeping of markers waiting for a leader.
type markerKey struct {
	id string
	pc *completion
	tp TopicPartition
}

// markerStart is when a completion's first markers were handed out.
type markerStart struct {
	id string
	at time.Time
}

// stats answers a partStats on the partition actor, forgetting the
// marker bookkeeping of completions that ended meanwhile.
func (a *partActor) stats() Stats {
	if a.core == nil {
		s := newStats()
		s.Loading = 1
		return s
	}
	a.forgetEndedMarkers()
	s := a.core.Stats()
	s.UnknownDestination = len(a.noLeader)
	return s
}

// forgetEndedMarkers drops the bookkeeping of completions that are no
// longer being sent (cancelled by a newer epoch, or the partition
// reloaded): they will never report done.
func (a *partActor) forgetEndedMarkers() {
	for k := range a.noLeader {
		if !a.core.isCompleting(k.id, k.pc) {
			delete(a.noLeader, k)
		}
	}
	for pc, st := range a.markerStart {
		if !a.core.isCompleting(st.id, pc) {
			delete(a.markerStart, pc)
		}
	}
}

// isCompleting reports whether pc is the completion of id's transaction
// whose markers are still being sent.
func (c *Core) isCompleting(id string, pc *completion) bool { return c.completing[id] == pc }

// markersStarted records when each completion's first markers were
// handed out.
func (a *partActor) markersStarted(ms []*MarkerSend) {
	for _, s := range ms {
		if _, ok := a.markerStart[s.pc]; !ok {
			a.markerStart[s.pc] = markerStart{id: s.TransactionalID, at: time.Now()}
		}
	}
}

// markersDone observes the marker latency of each completion whose last
// marker was written.
func (a *partActor) markersDone(done []MarkersDone) {
	for _, d := range done {
		st, ok := a.markerStart[d.pc]
		if !ok {
			continue // no partitions: no marker was sent
		}
		delete(a.markerStart, d.pc)
		result := "abort"
		if d.Commit {
			result = "commit"
		}
		actors.EmitValue(a.c.sys, actors.EventTxnMarkersLatency, result, time.Since(st.at).Seconds())
	}
}
