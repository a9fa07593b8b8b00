package dumplog

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"

	"gregor/partition"
	storagesegment "gregor/storage/segment"
)

// dumpTxnIndex prints a .txnindex as Kafka's DumpLogSegments.dumpTxnIndex:
// one "version: … producerId: … firstOffset: … lastOffset: …
// lastStableOffset: …" line per aborted transaction. A trailing partial
// entry or an unknown version is reported as damage.
func dumpTxnIndex(out, errOut io.Writer, path string) (bool, error) {
	fmt.Fprintf(out, "Dumping %s\n", path)
	b, err := os.ReadFile(path)
	if err != nil {
		return true, err
	}
	for i := 0; i+storagesegment.TxnIndexEntrySize <= len(b); i += storagesegment.TxnIndexEntrySize {
		e := b[i:]
		v := int16(binary.BigEndian.Uint16(e))
		if v != 0 {
			fmt.Fprintf(errOut, "Corrupt transaction index %s: entry %d has version %d\n", path, i/storagesegment.TxnIndexEntrySize, v)
			return true, nil
		}
		fmt.Fprintf(out, "version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n", v,
			int64(binary.BigEndian.Uint64(e[2:])), int64(binary.BigEndian.Uint64(e[10:])),
			int64(binary.BigEndian.Uint64(e[18:])), int64(binary.BigEndian.Uint64(e[26:])))
	}
	if rest := len(b) % storagesegment.TxnIndexEntrySize; rest != 0 {
		fmt.Fprintf(errOut, "Corrupt transaction index %s: %d trailing bytes\n", path, rest)
		return true, nil
	}
	return false, nil
}

// dumpProducerSnapshot prints a producer-state .snapshot as Kafka's
// DumpLogSegments.dumpProducerIdSnapshot (the Java OptionalLong spelling of
// currentTxnFirstOffset included), one line per producer in id order; a
// corrupt snapshot is reported on errOut.
func dumpProducerSnapshot(out, errOut io.Writer, path string) (bool, error) {
	fmt.Fprintf(out, "Dumping %s\n", path)
	b, err := os.ReadFile(path)
	if err != nil {
		return true, err
	}
	p, err := partition.DecodeProducerSnapshot(b)
	if err != nil {
		fmt.Fprintln(errOut, err)
		return true, nil
	}
	var ids []int64
	p.Each(func(id int64, _ *partition.ProducerEntry) { ids = append(ids, id) })
	slices.Sort(ids)
	for _, id := range ids {
		e := p.Entry(id)
		txn := "OptionalLong.empty"
		if e.TxnFirstOffset >= 0 {
			txn = fmt.Sprintf("OptionalLong[%d]", e.TxnFirstOffset)
		}
		fmt.Fprintf(out, "producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %s lastTimestamp: %d ",
			id, e.Epoch, e.CoordinatorEpoch, txn, e.LastTimestamp)
		if n := len(e.Batches); n > 0 {
			m := e.Batches[n-1]
			fmt.Fprintf(out, "firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
				m.FirstSeq, m.LastSeq, m.LastOffset, m.LastOffset-m.FirstOffset, m.Timestamp)
		}
		fmt.Fprintln(out)
	}
	return false, nil
}
