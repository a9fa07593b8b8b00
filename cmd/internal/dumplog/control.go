package dumplog

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/record"
)

// writeControl prints a control record as Kafka does: transaction markers
// as "endTxnMarker: COMMIT coordinatorEpoch: N", anything else by type.
func writeControl(w *strings.Builder, r *record.Record) {
	var k kmsg.ControlRecordKey
	if err := k.ReadFrom(r.Key); err != nil {
		fmt.Fprintf(w, " controlType: unparsable (%v)", err)
		return
	}
	switch k.Type {
	case kmsg.ControlRecordKeyTypeAbort, kmsg.ControlRecordKeyTypeCommit:
		var v kmsg.EndTxnMarker
		if err := v.ReadFrom(r.Value); err != nil {
			fmt.Fprintf(w, " endTxnMarker: unparsable (%v)", err)
			return
		}
		name := "ABORT"
		if k.Type == kmsg.ControlRecordKeyTypeCommit {
			name = "COMMIT"
		}
		fmt.Fprintf(w, " endTxnMarker: %s coordinatorEpoch: %d", name, v.CoordinatorEpoch)
	default:
		fmt.Fprintf(w, " controlType: %d", k.Type)
	}
}
