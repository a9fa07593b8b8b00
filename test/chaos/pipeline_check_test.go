package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// caughtUpTo reports whether every partition's committed offset reached
// its high watermark.
func caughtUpTo(committed, hws map[int32]int64) (bool, string) {
	for p, hw := range hws {
		if committed[p] < hw {
			return false, fmt.Sprint(committed)
		}
	}
	return true, ""
}

// checkPipeline proves the pipeline's output after the fault phase: it
// waits (bounded) until every output partition's last stable offset is
// its high watermark (every transaction completed: none is left holding
// the LSO), checks the output replicas like the chaos topic's (no gap, no
// divergence, no corruption, markers included), replays the leader's log
// as a read_committed consumer, reads the output with a real
// read_committed consumer, and runs CheckExactlyOnce against the input
// logs below their high watermarks. It returns that result, the replica
// check's, the output's high watermarks and whether the LSOs came level.
func checkPipeline(t *testing.T, c *cluster, inLogs map[int32]*ReplicaLog, inHWs map[int32]int64) (EOSResult, Result, map[int32]int64, bool) {
	t.Helper()
	adm := kadm.NewClient(c.client())
	why, lsoOK := poll(60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hw, err := adm.ListEndOffsets(ctx, eosOut)
		if err != nil {
			return false, err.Error()
		}
		lso, err := adm.ListCommittedOffsets(ctx, eosOut)
		if err != nil {
			return false, err.Error()
		}
		for p := int32(0); p < partitions; p++ {
			h, ok1 := hw.Lookup(eosOut, p)
			l, ok2 := lso.Lookup(eosOut, p)
			if !ok1 || !ok2 || h.Err != nil || l.Err != nil || h.Offset != l.Offset {
				return false, fmt.Sprintf("partition %d: high watermark %d (%v), last stable offset %d (%v)", p, h.Offset, h.Err, l.Offset, l.Err)
			}
		}
		return true, ""
	})
	outHWs := endOffsets(t, c, eosOut, false)
	res, outLogs := check(t, c, eosOut, outHWs, nil, true)
	if !lsoOK {
		res.note("%s: last stable offset not back to the high watermark within 60 s: %s", eosOut, why)
	}
	in := EOSInput{Inputs: map[int32][]Entry{}, Outputs: map[int32]CommittedView{}}
	last := map[int32]int64{} // offset of each output partition's last committed record
	for p := int32(0); p < partitions; p++ {
		if l := inLogs[p]; l != nil {
			for _, e := range l.Entries {
				if e.Offset >= inHWs[p] {
					break
				}
				if !e.Control {
					in.Inputs[p] = append(in.Inputs[p], e)
				}
			}
		}
		var view CommittedView
		if l := outLogs[p]; l != nil {
			view = ReadCommitted(l, outHWs[p])
		}
		in.Outputs[p] = view
		last[p] = -1
		for _, e := range view.Committed {
			last[p] = max(last[p], e.Offset)
		}
	}
	in.Fetched = readCommittedOutput(t, c, last)
	return CheckExactlyOnce(in), res, outHWs, lsoOK
}

// readCommittedOutput reads the output topic from the start with a
// read_committed franz-go consumer until every partition has returned its
// record at last[p] (bounded), and returns the values per partition.
func readCommittedOutput(t *testing.T, c *cluster, last map[int32]int64) map[int32][]string {
	t.Helper()
	cl := c.client(kgo.ConsumeTopics(eosOut), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(500*time.Millisecond))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := map[int32][]string{}
	reached := map[int32]bool{}
	done := func() bool {
		for p, o := range last {
			if o >= 0 && !reached[p] {
				return false
			}
		}
		return true
	}
	for !done() && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], string(r.Value))
			if r.Offset >= last[r.Partition] {
				reached[r.Partition] = true
			}
		})
	}
	if !done() {
		t.Logf("read_committed consumer of %s did not reach the last committed offsets %v within 60 s", eosOut, last)
	}
	return out
}
