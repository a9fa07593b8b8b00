package fetcher

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors"
	"gregor/partition"
	"gregor/storage/record"
)

// TraceDetail implements actors.TraceDetailer for a finished request to
// the leader: for a fetch response, the offset ranges of the record
// batches it carried per partition (what the follower then appends, see
// partition's followerAppend trace) and the leader's high watermark. It
// runs on the fetcher's goroutine after the result was handled, only while
// the fetcher is traced; the response is the fetcher's own (read only).
func (r *result) TraceDetail(e *actors.TraceEvent) {
	switch {
	case r.err != nil:
		if errors.Is(r.err, context.Canceled) {
			e.Detail = "request cancelled"
			return
		}
		e.Detail = "request to leader failed: " + r.err.Error()
	case r.epoch != nil:
		var b strings.Builder
		b.WriteString("OffsetForLeaderEpoch response:")
		for _, rt := range r.epoch.Topics {
			e.Topics = appendTopic(e.Topics, rt.Topic)
			for _, rp := range rt.Partitions {
				fmt.Fprintf(&b, " %s-%d end offset %d (epoch %d)", rt.Topic, rp.Partition, rp.EndOffset, rp.LeaderEpoch)
			}
		}
		e.Detail = b.String()
	case r.offsets != nil:
		var b strings.Builder
		b.WriteString("ListOffsets responses:")
		for i, resp := range []*kmsg.ListOffsetsResponse{r.offsets.earliest, r.offsets.latest} {
			for _, rt := range resp.Topics {
				e.Topics = appendTopic(e.Topics, rt.Topic)
				for _, rp := range rt.Partitions {
					fmt.Fprintf(&b, " %s-%d %s %d", rt.Topic, rp.Partition, [2]string{"log start", "log end"}[i], rp.Offset)
				}
			}
		}
		e.Detail = b.String()
	case r.fetch != nil:
		var b strings.Builder
		b.WriteString("fetch response:")
		if err := kerr.ErrorForCode(r.fetch.ErrorCode); err != nil {
			fmt.Fprintf(&b, " %v", err)
		}
		n := 0
		for _, rt := range r.fetch.Topics {
			e.Topics = appendTopic(e.Topics, rt.Topic)
			for i := range rt.Partitions {
				rp := &rt.Partitions[i]
				tp := partition.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}.String()
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					fmt.Fprintf(&b, " %s %v;", tp, err)
					continue
				}
				first, last, ok := batchRange(rp.RecordBatches)
				if !ok {
					continue // nothing new for this partition
				}
				n++
				e.Ranges = append(e.Ranges, actors.TraceRange{Partition: tp, First: first, Last: last})
				fmt.Fprintf(&b, " %s offsets %d..%d (leader high watermark %d);", tp, first, last, rp.HighWatermark)
			}
		}
		if n == 0 {
			b.WriteString(" no new records")
		}
		e.Detail = strings.TrimSuffix(b.String(), ";")
		if len(e.Ranges) == 1 {
			e.Partition = e.Ranges[0].Partition
		}
	}
}

func appendTopic(ts []string, t string) []string {
	for _, x := range ts {
		if x == t {
			return ts
		}
	}
	return append(ts, t)
}

// batchRange is the first batch's base offset and the last whole batch's
// last offset in b; ok is false when b holds no whole batch.
func batchRange(b []byte) (first, last int64, ok bool) {
	for len(b) >= record.HeaderSize {
		h, err := record.ParseHeader(b)
		if err != nil || h.Size() > len(b) {
			break
		}
		if !ok {
			first, ok = h.BaseOffset, true
		}
		last = h.LastOffset()
		b = b[h.Size():]
	}
	return first, last, ok
}
