package dumplog

import (
	"fmt"
	"strings"

	"gregor/storage/record"
)

// controlTypeNames are Kafka's ControlRecordType names by type id; an id
// not listed is UNKNOWN, as ControlRecordType.fromTypeId maps it.
var controlTypeNames = map[record.ControlType]string{
	record.ControlAbort:  "ABORT",
	record.ControlCommit: "COMMIT",
	2:                    "LEADER_CHANGE",
	3:                    "SNAPSHOT_HEADER",
	4:                    "SNAPSHOT_FOOTER",
	5:                    "KRAFT_VERSION",
	6:                    "KRAFT_VOTERS",
}

// writeControl prints a control record as DumpLogSegments does:
// transaction markers as " endTxnMarker: COMMIT coordinatorEpoch: N",
// other types as " controlType: NAME(id)". Kafka prints the KRaft
// snapshot and voter records (types 3–6) as JSON; they only occur in a
// KRaft metadata log, which Gregor does not have, so they print by name
// here. A key or marker too short to decode, where Kafka's tool stops with
// an exception, is noted on the line and the dump goes on.
func writeControl(w *strings.Builder, r *record.Record) {
	_, typ, err := record.ControlKey(r.Key)
	if err != nil {
		fmt.Fprintf(w, " controlType: unparsable (%v)", err)
		return
	}
	name, ok := controlTypeNames[typ]
	if !ok {
		name = "UNKNOWN"
	}
	switch typ {
	case record.ControlAbort, record.ControlCommit:
		epoch, err := record.EndTxnMarkerValue(r.Value)
		if err != nil {
			fmt.Fprintf(w, " endTxnMarker: unparsable (%v)", err)
			return
		}
		fmt.Fprintf(w, " endTxnMarker: %s coordinatorEpoch: %d", name, epoch)
	default:
		fmt.Fprintf(w, " controlType: %s(%d)", name, typ)
	}
}
