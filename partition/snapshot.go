package partition

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"go.uber.org/zap"

	"gregor/storage/record"
)

// Producer-state snapshots in Kafka's format (ProducerSnapshot version 1,
// ProducerStateManager.writeSnapshot), the content of storage's
// <offset>.snapshot files: version int16 = 1, crc uint32 (CRC-32C of the
// bytes after it), then an int32 count of entries, each producerId int64,
// epoch int16, lastSequence int32, lastOffset int64, offsetDelta int32,
// timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64.
// As in Kafka only the last batch of each producer is kept (a retry of an
// older one after a restart is answered OUT_OF_ORDER_SEQUENCE_NUMBER, not
// as a duplicate), and completed transactions whose marker the high
// watermark had not passed are not recorded.

const (
	producerSnapshotVersion   = 1
	producerSnapshotHeader    = 2 + 4 + 4 // version, crc, entry count
	producerSnapshotEntrySize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// errBadSnapshot reports a snapshot that does not decode.
var errBadSnapshot = errors.New("partition: corrupt producer snapshot")

// EncodeProducerSnapshot encodes p in Kafka's ProducerSnapshot v1 format,
// producers in id order.
func EncodeProducerSnapshot(p *Producers) []byte {
	ids := make([]int64, 0, len(p.m))
	for id := range p.m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	b := make([]byte, producerSnapshotHeader, producerSnapshotHeader+len(ids)*producerSnapshotEntrySize)
	binary.BigEndian.PutUint16(b, producerSnapshotVersion)
	binary.BigEndian.PutUint32(b[6:], uint32(len(ids)))
	for _, id := range ids {
		e := p.m[id]
		lastSeq, lastOff, delta, ts := record.NoSequence, int64(-1), int32(0), e.LastTimestamp
		if n := len(e.Batches); n > 0 {
			last := e.Batches[n-1]
			lastSeq, lastOff, delta, ts = last.LastSeq, last.LastOffset, int32(last.LastOffset-last.FirstOffset), last.Timestamp
		}
		b = binary.BigEndian.AppendUint64(b, uint64(id))
		b = binary.BigEndian.AppendUint16(b, uint16(e.Epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(lastSeq))
		b = binary.BigEndian.AppendUint64(b, uint64(lastOff))
		b = binary.BigEndian.AppendUint32(b, uint32(delta))
		b = binary.BigEndian.AppendUint64(b, uint64(ts))
		b = binary.BigEndian.AppendUint32(b, uint32(e.CoordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.TxnFirstOffset))
	}
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], crc32c))
	return b
}

// DecodeProducerSnapshot decodes a ProducerSnapshot v1. Errors (wrapping
// errBadSnapshot): an unknown version, a CRC mismatch, a short or overlong
// body.
func DecodeProducerSnapshot(b []byte) (*Producers, error) {
	if len(b) < producerSnapshotHeader {
		return nil, fmt.Errorf("%w: %d bytes", errBadSnapshot, len(b))
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != producerSnapshotVersion {
		return nil, fmt.Errorf("%w: version %d", errBadSnapshot, v)
	}
	if crc := binary.BigEndian.Uint32(b[2:]); crc != crc32.Checksum(b[6:], crc32c) {
		return nil, fmt.Errorf("%w: CRC mismatch", errBadSnapshot)
	}
	n := int(int32(binary.BigEndian.Uint32(b[6:])))
	if n < 0 || len(b) != producerSnapshotHeader+n*producerSnapshotEntrySize {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", errBadSnapshot, n, len(b))
	}
	p := NewProducers()
	for e := b[producerSnapshotHeader:]; len(e) > 0; e = e[producerSnapshotEntrySize:] {
		id := int64(binary.BigEndian.Uint64(e))
		ent := &ProducerEntry{
			Epoch:            int16(binary.BigEndian.Uint16(e[8:])),
			LastTimestamp:    int64(binary.BigEndian.Uint64(e[26:])),
			CoordinatorEpoch: int32(binary.BigEndian.Uint32(e[34:])),
			TxnFirstOffset:   int64(binary.BigEndian.Uint64(e[38:])),
		}
		lastSeq := int32(binary.BigEndian.Uint32(e[10:]))
		lastOff := int64(binary.BigEndian.Uint64(e[14:]))
		delta := int32(binary.BigEndian.Uint32(e[22:]))
		if lastOff >= 0 {
			first := lastSeq
			if lastSeq != record.NoSequence {
				first = int32((int64(lastSeq) - int64(delta) + (1 << 31)) % (1 << 31)) // sequences wrap at MaxInt32
			}
			ent.Batches = []BatchMeta{{FirstSeq: first, LastSeq: lastSeq, FirstOffset: lastOff - int64(delta), LastOffset: lastOff, Timestamp: ent.LastTimestamp}}
		}
		p.m[id] = ent
		if ent.TxnFirstOffset >= 0 {
			p.ongoing = append(p.ongoing, txnSpan{pid: id, first: ent.TxnFirstOffset, last: -1})
		}
	}
	slices.SortFunc(p.ongoing, func(x, y txnSpan) int { return cmp.Compare(x.first, y.first) })
	return p, nil
}

// SnapshotLog is the part of storage.Log that keeps producer-state
// snapshots; StorageLog implements it. Without it the state is rebuilt
// from the whole log at every start.
type SnapshotLog interface {
	// WriteProducerSnapshot stores data as the snapshot at offset.
	WriteProducerSnapshot(offset int64, data []byte) error
	// LatestProducerSnapshot hands read the newest usable snapshot at or
	// below the log end offset (see storage.Log.LatestProducerSnapshot).
	LatestProducerSnapshot(read func(offset int64, data []byte) error) (offset int64, ok bool, err error)
	// ActiveSegmentBase is the active segment's base offset (a roll changes it).
	ActiveSegmentBase() int64
}

var _ SnapshotLog = StorageLog{}

// snapshotOnRoll writes a producer snapshot at the log end offset when
// the log rolled since the last check (Kafka snapshots on every roll), so
// a start scans at most about a segment.
func (a *partitionActor) snapshotOnRoll() {
	sl, ok := a.lg.(SnapshotLog)
	if !ok {
		return
	}
	if base := sl.ActiveSegmentBase(); base != a.activeBase {
		a.activeBase = base
		a.writeSnapshot(sl)
	}
}

// writeSnapshot stores the producer state at the log end offset; a
// failure only costs the next start a longer scan. A partition without
// producers writes none (most partitions of most topics: the scan at start
// finds nothing to rebuild either), nor does one whose log has not grown
// since its last snapshot.
func (a *partitionActor) writeSnapshot(sl SnapshotLog) {
	leo := a.lg.LogEndOffset()
	if a.core.prod.Len() == 0 || leo == a.snapshotAt {
		return
	}
	a.snapshotAt = leo
	if err := sl.WriteProducerSnapshot(leo, EncodeProducerSnapshot(a.core.prod)); err != nil {
		a.log.Warn("producer snapshot not written", zap.Stringer("partition", a.h.tp), zap.Int64("offset", leo), zap.Error(err))
	}
}
