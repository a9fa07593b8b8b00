package partition

import (
	"fmt"

	"gregor/actors"
)

// Trace details of the partition actor's messages (actors.TraceDetailer).
// The actor records what it did in the message while handling it (a few
// plain stores); the trace middleware turns that into the event only while
// the actor is traced. Together they let a reader follow an acks=-1
// produce across brokers: the leader's *Produce (offsets first..last,
// waiting for the high watermark), each follower's append of that range
// (*followerAppend), the leader's *followerFetch events as the followers
// report their log end offsets, the one that moves the high watermark past
// the batch and releases the reply, then the "Produce sent" request event
// with the same correlation id.

// produceTrace is what the actor did with a Produce.
type produceTrace struct {
	appended    bool
	verify      bool // KIP-890: sent back to be verified with the coordinator first
	waits       bool // acks=-1: parked until the high watermark passes last
	first, last int64
	hw          int64 // high watermark right after the append
}

// fetchTrace is the leader's view around a follower's fetch.
type fetchTrace struct {
	hwBefore, hw int64
	leo          int64 // the leader's log end offset
	released     int   // acks=-1 produces answered because of this fetch
}

// appendTrace is a follower append's outcome.
type appendTrace struct {
	first, last int64 // batches appended (-1 when none)
	leo, hw     int64 // the follower's log end offset and high watermark after
}

// TraceDetail implements actors.TraceDetailer: the offsets the batch got
// and whether the reply waits for replication.
func (p *Produce) TraceDetail(e *actors.TraceEvent) {
	t := p.tr
	if t.verify {
		e.Detail = fmt.Sprintf("acks=%d: not appended: transactional batch to verify with the coordinator first (KIP-890)", p.Acks)
		return
	}
	if !t.appended {
		e.Detail = fmt.Sprintf("acks=%d: not appended (refused, duplicate or abandoned)", p.Acks)
		return
	}
	e.Ranges = []actors.TraceRange{{Partition: e.Partition, First: t.first, Last: t.last}}
	e.Values = map[string]int64{"acks": int64(p.Acks), "hw": t.hw}
	if t.waits {
		e.Values["wait_hw"] = t.last + 1
		e.Detail = fmt.Sprintf("appended offsets %d..%d as leader, acks=-1: reply waits for high watermark %d (now %d)", t.first, t.last, t.last+1, t.hw)
		return
	}
	e.Detail = fmt.Sprintf("appended offsets %d..%d as leader, acks=%d: replied (high watermark %d)", t.first, t.last, p.Acks, t.hw)
}

// TraceDetail implements actors.TraceDetailer: the follower's fetch
// position and the high watermark before and after it.
func (m *followerFetch) TraceDetail(e *actors.TraceEvent) {
	t := m.tr
	e.Values = map[string]int64{"replica": int64(m.replica), "fetch_offset": m.fetchOffset,
		"hw_before": t.hwBefore, "hw": t.hw, "log_end_offset": t.leo, "released": int64(t.released)}
	e.Detail = fmt.Sprintf("follower %d fetched at %d (leader log end %d)", m.replica, m.fetchOffset, t.leo)
	if t.hw != t.hwBefore {
		e.Detail += fmt.Sprintf("; high watermark %d -> %d", t.hwBefore, t.hw)
	}
	if t.released > 0 {
		e.Detail += fmt.Sprintf("; released %d acks=-1 produce(s)", t.released)
	}
}

// TraceDetail implements actors.TraceDetailer: the batches a follower
// appended from its leader.
func (m *followerAppend) TraceDetail(e *actors.TraceEvent) {
	t := m.tr
	e.Values = map[string]int64{"leader_epoch": int64(m.leaderEpoch), "leader_hw": m.leaderHW,
		"log_end_offset": t.leo, "hw": t.hw}
	if t.first < 0 {
		e.Detail = fmt.Sprintf("follower append: no batches (leader high watermark %d)", m.leaderHW)
		return
	}
	e.Ranges = []actors.TraceRange{{Partition: e.Partition, First: t.first, Last: t.last}}
	e.Detail = fmt.Sprintf("follower appended offsets %d..%d (log end %d, high watermark %d)", t.first, t.last, t.leo, t.hw)
}

// TraceDetail implements actors.TraceDetailer: a follower truncation.
func (m *truncate) TraceDetail(e *actors.TraceEvent) {
	e.Values = map[string]int64{"offset": m.offset, "log_end_offset": m.tr.logEndOffset}
	e.Detail = fmt.Sprintf("follower truncate to %d (fully=%v): log end %d", m.offset, m.fully, m.tr.logEndOffset)
	if m.tr.err != nil {
		e.Detail += ": " + m.tr.err.Error()
	}
}
