package chaos

import (
	"fmt"
	"maps"
	"slices"
)

// CommittedView is what a read_committed consumer reads from one
// partition's log below an end offset (the last stable offset): the
// non-transactional records, and the records of every transaction whose
// COMMIT marker is below the end; the records of aborted transactions are
// skipped, as Kafka's consumer skips them with the aborted transactions
// list.
type CommittedView struct {
	// Committed holds the data records a read_committed consumer returns.
	Committed []Entry
	// Aborted counts the data records of aborted transactions.
	Aborted int
	// Open holds transactional records below end whose transaction has no
	// marker below end: with end at the last stable offset there must be
	// none (an open transaction holds the LSO at its first offset).
	Open []Entry
	// Commits and Aborts count the markers.
	Commits, Aborts int
}

// ReadCommitted replays l below end as a read_committed consumer sees it:
// a producer's transactional records wait for its next marker, which
// commits or discards them all (a producer has at most one transaction
// open per partition).
func ReadCommitted(l *ReplicaLog, end int64) CommittedView {
	var v CommittedView
	pending := map[int64][]Entry{} // producer id → its open transaction's records
	for _, e := range l.Entries {
		if e.Offset >= end {
			break
		}
		switch {
		case e.Control:
			if e.Commit {
				v.Commits++
				v.Committed = append(v.Committed, pending[e.ProducerID]...)
			} else {
				v.Aborts++
				v.Aborted += len(pending[e.ProducerID])
			}
			delete(pending, e.ProducerID)
		case e.Transactional:
			pending[e.ProducerID] = append(pending[e.ProducerID], e)
		default:
			v.Committed = append(v.Committed, e)
		}
	}
	for _, pid := range slices.Sorted(maps.Keys(pending)) {
		v.Open = append(v.Open, pending[pid]...)
	}
	return v
}

// EOSInput is what the exactly-once check needs for one consume-transform-
// produce pipeline that copies every record of input partition p, value
// unchanged, to output partition p inside transactions.
type EOSInput struct {
	// Inputs holds each input partition's data records below its high
	// watermark (the pipeline reads them all: the input is not
	// transactional, so its LSO is its high watermark).
	Inputs map[int32][]Entry
	// Outputs holds each output partition's view below its last stable
	// offset (ReadCommitted of the leader's log).
	Outputs map[int32]CommittedView
	// Fetched holds, per output partition, the values a real
	// read_committed consumer read (nil: not compared).
	Fetched map[int32][]string
}

// EOSResult counts what CheckExactlyOnce found; Details names each
// finding (capped).
type EOSResult struct {
	Inputs     int // input records
	Committed  int // committed output records
	Aborted    int // output records of aborted transactions (not read)
	Commits    int // COMMIT markers in the output
	Aborts     int // ABORT markers in the output
	Lost       int // inputs with no committed output
	Duplicated int // committed outputs beyond the first of their value
	Unexpected int // committed outputs that are no input of their partition
	Open       int // output records of transactions never completed
	// FetchMismatch counts values whose number of copies a read_committed
	// consumer read differs from the log's committed view.
	FetchMismatch int
	Details       []string
}

func (r *EOSResult) note(format string, args ...any) {
	if len(r.Details) < maxDetails {
		r.Details = append(r.Details, fmt.Sprintf(format, args...))
	}
}

// OK reports whether the output is exactly the input, once each.
func (r *EOSResult) OK() bool {
	return r.Lost == 0 && r.Duplicated == 0 && r.Unexpected == 0 && r.Open == 0 && r.FetchMismatch == 0
}

// CheckExactlyOnce proves every input record is in the committed output
// of its partition exactly once, nothing else is, no transaction was left
// open, and a read_committed consumer read exactly the committed view.
func CheckExactlyOnce(in EOSInput) EOSResult {
	var res EOSResult
	for _, p := range slices.Sorted(maps.Keys(in.Inputs)) {
		want := map[string]bool{}
		for _, e := range in.Inputs[p] {
			want[e.Value] = true
		}
		res.Inputs += len(in.Inputs[p])
		out := in.Outputs[p]
		res.Committed += len(out.Committed)
		res.Aborted += out.Aborted
		res.Commits += out.Commits
		res.Aborts += out.Aborts
		got := map[string]int{}
		for _, e := range out.Committed {
			got[e.Value]++
			switch {
			case !want[e.Value]:
				res.Unexpected++
				res.note("output %d: committed %s is no input of partition %d", p, e.describe(), p)
			case got[e.Value] > 1:
				res.Duplicated++
				res.note("output %d: committed %s is copy %d of its input", p, e.describe(), got[e.Value])
			}
		}
		for _, e := range in.Inputs[p] {
			if got[e.Value] == 0 {
				res.Lost++
				res.note("input %d: %s has no committed output", p, e.describe())
			}
		}
		for _, e := range out.Open {
			res.Open++
			res.note("output %d: %s of producer %d belongs to a transaction never completed", p, e.describe(), e.ProducerID)
		}
		if in.Fetched == nil {
			continue
		}
		fetched := map[string]int{}
		for _, v := range in.Fetched[p] {
			fetched[v]++
		}
		for _, v := range slices.Sorted(maps.Keys(fetched)) {
			if fetched[v] != got[v] {
				res.FetchMismatch++
				res.note("output %d: a read_committed consumer read %q %d times, the log commits it %d times", p, v, fetched[v], got[v])
			}
		}
		for _, v := range slices.Sorted(maps.Keys(got)) {
			if fetched[v] == 0 {
				res.FetchMismatch++
				res.note("output %d: a read_committed consumer never read %q (committed %d times)", p, v, got[v])
			}
		}
	}
	return res
}
