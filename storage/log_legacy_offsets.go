package storage

import "time"

// LegacyOffsetsBefore answers ListOffsets v0 (OldStyleOffsets) as Kafka's
// UnifiedLog.legacyFetchOffsetsBefore: the candidates are each segment's
// base offset (at least the log start offset) with the segment's .log
// modification time, plus the log end offset stamped now when the active
// segment is not empty. timestamp -1 (latest) starts from the last
// candidate, -2 (earliest) from the first, any other from the last one
// modified at or before timestamp (ms); up to maxNumOffsets offsets are
// returned from there towards the start, newest first. None match → an
// empty list.
func (l *Log) LegacyOffsetsBefore(timestamp int64, maxNumOffsets int32) []int64 {
	segs := l.segs.Load().segs
	start := l.LogStartOffset()
	type cand struct{ off, ms int64 }
	cands := make([]cand, 0, len(segs)+1)
	for _, s := range segs {
		cands = append(cands, cand{max(s.BaseOffset(), start), s.LastModified().UnixMilli()})
	}
	if len(segs) > 0 && segs[len(segs)-1].Size() > 0 {
		cands = append(cands, cand{l.LogEndOffset(), time.Now().UnixMilli()})
	}
	i := len(cands) - 1
	switch timestamp {
	case -1:
	case -2:
		i = min(0, i)
	default:
		for i >= 0 && cands[i].ms > timestamp {
			i--
		}
	}
	n := min(int(max(maxNumOffsets, 0)), i+1)
	out := make([]int64, 0, n)
	for j := 0; j < n; j++ {
		out = append(out, cands[i-j].off)
	}
	return out
}
