package txncoordinator

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
)

// Trace details of the partition actors' messages (actors.TraceDetailer),
// as the partition and fetcher actors give theirs: the actor notes what it
// did in the message while handling it (a few plain stores) and the trace
// middleware turns that into the event only while the actor is traced, so
// GET /trace?kind=txn shows each request with its transactional id and
// each load, append and WriteTxnMarkers answer of a coordinator partition.

// txnTrace is what the partition actor did with a txnRequest.
type txnTrace struct {
	handled bool  // false: not loaded yet, answered COORDINATOR_LOAD_IN_PROGRESS
	epoch   int32 // coordinator epoch
	writes  int   // records queued for __transaction_state by the request
	markers int   // marker sends started by the request
}

// TraceDetail implements actors.TraceDetailer.
func (r *txnRequest) TraceDetail(e *actors.TraceEvent) {
	e.Partition = fmt.Sprintf("%s-%d", TopicName, r.partition)
	if !r.tr.handled {
		e.Detail = fmt.Sprintf("%s transactional.id=%q: partition loading, answered COORDINATOR_LOAD_IN_PROGRESS", r.api, r.id)
		return
	}
	e.Values = map[string]int64{"coordinator_epoch": int64(r.tr.epoch), "writes": int64(r.tr.writes), "markers": int64(r.tr.markers)}
	e.Detail = fmt.Sprintf("%s transactional.id=%q at coordinator epoch %d", r.api, r.id, r.tr.epoch)
}

// TraceDetail implements actors.TraceDetailer.
func (m *loadedMsg) TraceDetail(e *actors.TraceEvent) {
	if m.err != nil {
		e.Detail = "load failed (retrying): " + m.err.Error()
		return
	}
	n := 0
	if m.loader != nil {
		n = len(m.loader.Txns)
	}
	e.Values = map[string]int64{"transactional_ids": int64(n)}
	e.Detail = fmt.Sprintf("loaded %d transactional ids", n)
}

// TraceDetail implements actors.TraceDetailer.
func (m *appendedMsg) TraceDetail(e *actors.TraceEvent) {
	e.Values = map[string]int64{"records": int64(m.records), "error_code": int64(m.code)}
	if m.code != 0 {
		e.Detail = fmt.Sprintf("append of %d records to %s failed: %v", m.records, TopicName, kerr.ErrorForCode(m.code))
		return
	}
	e.Detail = fmt.Sprintf("appended %d records to %s", m.records, TopicName)
}

// TraceDetail implements actors.TraceDetailer.
func (m *markersMsg) TraceDetail(e *actors.TraceEvent) {
	parts, failed := 0, 0
	var ids []string
	for _, en := range m.entries {
		parts += len(en.parts)
		ids = append(ids, en.send.TransactionalID)
	}
	if m.resp != nil {
		for _, mk := range m.resp.Markers {
			for _, t := range mk.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode != 0 {
						failed++
					}
				}
			}
		}
	}
	e.Values = map[string]int64{"broker": int64(m.broker), "markers": int64(len(m.entries)), "partitions": int64(parts), "failed": int64(failed)}
	if m.err != nil {
		e.Detail = fmt.Sprintf("WriteTxnMarkers to broker %d failed (retrying): %v", m.broker, m.err)
		return
	}
	e.Detail = fmt.Sprintf("WriteTxnMarkers to broker %d answered for %s: %d partitions, %d with an error", m.broker, strings.Join(ids, ","), parts, failed)
}
