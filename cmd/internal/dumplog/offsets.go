package dumplog

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/record"
)

// writeOffsetsRecord decodes a __consumer_offsets record (--offsets-decoder):
// key versions 0 and 1 are offset commits (OffsetCommitKey / Value), version
// 2 is group metadata (GroupMetadataKey / Value). A null value is a
// tombstone, printed as <DELETE> like Kafka's tool. Output is JSON in the
// shape of Kafka's OffsetsMessageParser: key: {"type":…,"data":…}
// payload: {"version":…,"data":…}.
func writeOffsetsRecord(w *strings.Builder, r *record.Record) {
	if len(r.Key) < 2 {
		fmt.Fprintf(w, " key: unparsable (%d bytes)", len(r.Key))
		return
	}
	kv := int16(binary.BigEndian.Uint16(r.Key))
	var key, val any
	var kind string
	var kerr, verr error
	switch kv {
	case 0, 1:
		kind = "offset_commit"
		k := new(kmsg.OffsetCommitKey)
		kerr, key = k.ReadFrom(r.Key), k
		if r.Value != nil {
			v := new(kmsg.OffsetCommitValue)
			verr, val = v.ReadFrom(r.Value), v
		}
	case 2:
		kind = "group_metadata"
		k := new(kmsg.GroupMetadataKey)
		kerr, key = k.ReadFrom(r.Key), k
		if r.Value != nil {
			v := new(kmsg.GroupMetadataValue)
			verr, val = v.ReadFrom(r.Value), v
		}
	default:
		fmt.Fprintf(w, " key: unknown key version %d", kv)
		return
	}
	if kerr != nil {
		fmt.Fprintf(w, " key: unparsable %s key (%v)", kind, kerr)
		return
	}
	kj, _ := json.Marshal(map[string]any{"type": kind, "data": key})
	fmt.Fprintf(w, " key: %s", kj)
	switch {
	case r.Value == nil:
		w.WriteString(" payload: <DELETE>")
	case verr != nil:
		fmt.Fprintf(w, " payload: unparsable (%v)", verr)
	default:
		var version int16
		if len(r.Value) >= 2 {
			version = int16(binary.BigEndian.Uint16(r.Value))
		}
		vj, _ := json.Marshal(map[string]any{"version": version, "data": val})
		fmt.Fprintf(w, " payload: %s", vj)
	}
}
