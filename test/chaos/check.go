package chaos

import (
	"fmt"
	"sort"
)

// Acked is one record the producer saw acknowledged (acks=all): the
// partition and offset from the produce response, and its unique value.
type Acked struct {
	Partition int32
	Offset    int64
	Value     string
}

// PartitionInput is what the checker needs for one partition.
type PartitionInput struct {
	Topic     string
	Partition int32
	// HighWatermark is the leader's high watermark (ListOffsets latest).
	HighWatermark int64
	// LogStart is the expected first offset (0: the chaos topic has no
	// retention, so nothing below the high watermark may be missing).
	LogStart int64
	Leader   int32
	// Replicas holds each replica's log by broker id (the leader's included).
	Replicas map[int32]*ReplicaLog
	Acked    []Acked
	// Transactional: the partition is written by transactions, whose
	// aborted attempts repeat values by design, so values are not checked
	// for duplicates here (CheckExactlyOnce checks the committed ones).
	Transactional bool
}

// Result counts what a check found; Details names each finding (capped).
type Result struct {
	Lost       int // acknowledged records missing at their offset
	Duplicated int // extra copies of a value below the high watermark
	Divergent  int // (replica, offset) pairs below the HW that differ from the leader
	Gaps       int // offsets below the high watermark missing from the leader's log
	Corrupt    int // undecodable batches in any replica
	Details    []string
}

// maxDetails caps Result.Details so a badly broken run stays readable.
const maxDetails = 40

func (r *Result) note(format string, args ...any) {
	if len(r.Details) < maxDetails {
		r.Details = append(r.Details, fmt.Sprintf(format, args...))
	}
}

// Add merges o into r.
func (r *Result) Add(o Result) {
	r.Lost += o.Lost
	r.Duplicated += o.Duplicated
	r.Divergent += o.Divergent
	r.Gaps += o.Gaps
	r.Corrupt += o.Corrupt
	for _, d := range o.Details {
		if len(r.Details) < maxDetails {
			r.Details = append(r.Details, d)
		}
	}
}

// OK reports whether nothing was found.
func (r *Result) OK() bool {
	return r.Lost == 0 && r.Duplicated == 0 && r.Divergent == 0 && r.Gaps == 0 && r.Corrupt == 0
}

// CheckPartition proves the partition's guarantees from its replicas' logs:
//   - every acknowledged record is in the leader's log exactly at its
//     acknowledged offset, below the high watermark (else Lost);
//   - no data value appears twice below the high watermark (Duplicated:
//     values are unique per produce, and the producer is idempotent;
//     skipped for a Transactional partition);
//   - every offset in [LogStart, HighWatermark) is in the leader's log (Gaps);
//   - every other replica holds the same record (key, value, batch leader
//     epoch, producer id) at every offset below the high watermark
//     (Divergent; a replica that lacks the offset diverges too).
func CheckPartition(in PartitionInput) Result {
	var res Result
	name := fmt.Sprintf("%s-%d", in.Topic, in.Partition)
	ids := make([]int32, 0, len(in.Replicas))
	for id, l := range in.Replicas {
		ids = append(ids, id)
		for _, p := range l.Problems {
			res.Corrupt++
			res.note("%s replica %d: corrupt log: %s", name, id, p)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	leader := in.Replicas[in.Leader]
	if leader == nil {
		res.Lost += len(in.Acked)
		res.note("%s: no log of leader %d", name, in.Leader)
		return res
	}
	byOffset := index(leader, in.HighWatermark)
	for o := in.LogStart; o < in.HighWatermark; o++ {
		if _, ok := byOffset[o]; !ok {
			res.Gaps++
			res.note("%s: offset %d below the high watermark %d missing from leader %d", name, o, in.HighWatermark, in.Leader)
		}
	}
	seen := make(map[string]int64, len(byOffset))
	for _, e := range leader.Entries {
		if e.Offset >= in.HighWatermark {
			break
		}
		if e.Control || in.Transactional {
			continue
		}
		if first, dup := seen[e.Value]; dup {
			res.Duplicated++
			res.note("%s: value %q at offsets %d and %d", name, e.Value, first, e.Offset)
			continue
		}
		seen[e.Value] = e.Offset
	}
	for _, a := range in.Acked {
		e, ok := byOffset[a.Offset]
		switch {
		case a.Offset >= in.HighWatermark:
			res.Lost++
			res.note("%s: acknowledged %q at offset %d is at or above the high watermark %d", name, a.Value, a.Offset, in.HighWatermark)
		case !ok:
			res.Lost++
			res.note("%s: acknowledged %q at offset %d: offset missing", name, a.Value, a.Offset)
		case e.Value != a.Value:
			res.Lost++
			res.note("%s: acknowledged %q at offset %d, found %s", name, a.Value, a.Offset, e.describe())
		}
	}
	for _, id := range ids {
		if id == in.Leader {
			continue
		}
		other := index(in.Replicas[id], in.HighWatermark)
		for o := in.LogStart; o < in.HighWatermark; o++ {
			want, ok := byOffset[o]
			if !ok {
				continue // counted as a gap
			}
			got, ok := other[o]
			if !ok {
				res.Divergent++
				res.note("%s replica %d: offset %d missing (leader has %s)", name, id, o, want.describe())
				continue
			}
			if got != want {
				res.Divergent++
				res.note("%s replica %d: offset %d has %s, leader %d has %s", name, id, o, got.describe(), in.Leader, want.describe())
			}
		}
	}
	return res
}

// index maps the log's offsets below hw to their entries.
func index(l *ReplicaLog, hw int64) map[int64]Entry {
	m := make(map[int64]Entry, len(l.Entries))
	for _, e := range l.Entries {
		if e.Offset >= hw {
			break
		}
		m[e.Offset] = e
	}
	return m
}
