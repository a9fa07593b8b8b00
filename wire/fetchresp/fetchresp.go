// Package fetchresp encodes a Fetch response body whose record sections are
// file regions, so the connection writer can send them with sendfile.
//
// kmsg.FetchResponse.AppendTo needs every partition's RecordBatches in
// memory. This encoder writes exactly the same bytes (a golden test checks
// that, for every version, against kmsg with the regions materialised) but
// stops at each partition's records length prefix, emits the regions as
// chunks, and continues. Field presence per version follows Kafka's
// FetchResponse.json (clients/src/main/resources/common/message): v1+
// ThrottleTimeMs; v4+ LastStableOffset and AbortedTransactions; v5+
// LogStartOffset; v7+ top-level ErrorCode and SessionId; v11+
// PreferredReadReplica; v12+ flexible (compact lengths, tagged fields:
// partition DivergingEpoch=0, CurrentLeader=1, SnapshotId=2, response
// NodeEndpoints=0); v13+ TopicId instead of the topic name.
package fetchresp

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/wire"
)

// Build encodes resp (a kmsg.FetchResponse filled in completely EXCEPT the
// record batches) at the given version as a response body (everything after
// the response header). Each partition's records field is written as a
// length prefix (int32 nullable bytes before v12, compact nullable bytes
// from v12) followed by file-region chunks that the writer sends with
// sendfile.
//
// records(t, p) returns the regions for resp.Topics[t].Partitions[p]; a nil
// slice (or a nil records func) means "use the partition's RecordBatches
// []byte as is" (nil RecordBatches → null, as kmsg encodes it); a non-nil
// empty slice is an empty (non-null) records field. Regions with Len 0 are
// skipped. release (may be nil) runs once after the body has been written or
// abandoned; it releases storage segment references.
//
// version is any version kmsg knows for Fetch (0 through 18); resp.Version
// is ignored.
func Build(version int16, resp *kmsg.FetchResponse, records func(t, p int) []storage.Region, release func()) *wire.Body {
	return BuildStreamed(version, resp, records, nil, release)
}

// BuildStreamed is Build where streams(t, p) (may be nil, or return nil)
// gives a partition's records as a wire.Stream produced while the body is
// written (down-converted records for Fetch v0-v3); a partition's stream
// takes precedence over its regions.
func BuildStreamed(version int16, resp *kmsg.FetchResponse, records func(t, p int) []storage.Region, streams func(t, p int) wire.Stream, release func()) *wire.Body {
	size, parts := estimate(resp)
	e := encoder{
		flexible: version >= 12,
		buf:      make([]byte, 0, size),
		chunks:   make([]wire.Chunk, 0, 2*parts+1), // bytes, region, bytes, region, …
	}
	e.streams = streams
	e.response(version, resp, records)
	e.cut()
	return &wire.Body{Chunks: e.chunks, Size: e.size, Release: release}
}

// estimate guesses the encoded size without records and counts the
// partitions, to size the buffer and the chunk list once.
func estimate(resp *kmsg.FetchResponse) (size, partitions int) {
	size = 64
	for i := range resp.Topics {
		size += 24 + len(resp.Topics[i].Topic) + 64*len(resp.Topics[i].Partitions)
		partitions += len(resp.Topics[i].Partitions)
	}
	return size, partitions
}

// encoder accumulates bytes in buf; cut() turns the bytes since the last cut
// into a chunk, so regions can sit between byte chunks.
type encoder struct {
	flexible bool
	buf      []byte
	start    int // first byte of buf not yet in a chunk
	chunks   []wire.Chunk
	size     int64
	streams  func(t, p int) wire.Stream
}

func (e *encoder) cut() {
	if len(e.buf) > e.start {
		// Later appends never write below len(buf), so the chunk stays intact
		// even if buf is reallocated.
		e.chunks = append(e.chunks, wire.Chunk{Bytes: e.buf[e.start:len(e.buf):len(e.buf)]})
		e.size += int64(len(e.buf) - e.start)
		e.start = len(e.buf)
	}
}

func (e *encoder) region(r storage.Region) {
	if r.Len <= 0 {
		return
	}
	e.cut()
	e.chunks = append(e.chunks, wire.Chunk{Region: r})
	e.size += r.Len
}

func (e *encoder) response(version int16, resp *kmsg.FetchResponse, records func(t, p int) []storage.Region) {
	if version >= 1 {
		e.i32(resp.ThrottleMillis)
	}
	if version >= 7 {
		e.i16(resp.ErrorCode)
		e.i32(resp.SessionID)
	}
	e.arrayLen(len(resp.Topics))
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		if version <= 12 {
			e.str(t.Topic)
		} else {
			e.buf = append(e.buf, t.TopicID[:]...)
		}
		e.arrayLen(len(t.Partitions))
		for pi := range t.Partitions {
			var regions []storage.Region
			if records != nil {
				regions = records(ti, pi)
			}
			var st wire.Stream
			if e.streams != nil {
				st = e.streams(ti, pi)
			}
			e.partition(version, &t.Partitions[pi], regions, st)
		}
		if e.flexible {
			e.tagsWithCount(&t.UnknownTags)
		}
	}
	if e.flexible {
		n := t2i(len(resp.Brokers) > 0)
		e.uvarint(uint32(n + resp.UnknownTags.Len()))
		if len(resp.Brokers) > 0 {
			e.tagged(0, func(e *encoder) {
				e.arrayLen(len(resp.Brokers))
				for i := range resp.Brokers {
					b := &resp.Brokers[i]
					e.i32(b.NodeID)
					e.str(b.Host)
					e.i32(b.Port)
					e.nullableStr(b.Rack)
					e.tagsWithCount(&b.UnknownTags)
				}
			})
		}
		e.buf = resp.UnknownTags.AppendEach(e.buf)
	}
}

func (e *encoder) partition(version int16, p *kmsg.FetchResponseTopicPartition, regions []storage.Region, st wire.Stream) {
	e.i32(p.Partition)
	e.i16(p.ErrorCode)
	e.i64(p.HighWatermark)
	if version >= 4 {
		e.i64(p.LastStableOffset)
	}
	if version >= 5 {
		e.i64(p.LogStartOffset)
	}
	if version >= 4 {
		at := p.AbortedTransactions
		if at == nil {
			e.nullLen()
		} else {
			e.arrayLen(len(at))
		}
		for i := range at {
			e.i64(at[i].ProducerID)
			e.i64(at[i].FirstOffset)
			if e.flexible {
				e.tagsWithCount(&at[i].UnknownTags)
			}
		}
	}
	if version >= 11 {
		e.i32(p.PreferredReadReplica)
	}
	switch {
	case st != nil:
		e.bytesLen(st.Len())
		e.cut()
		e.chunks = append(e.chunks, wire.Chunk{Stream: st})
		e.size += st.Len()
	case regions != nil:
		var n int64
		for _, r := range regions {
			n += max(r.Len, 0)
		}
		e.bytesLen(n)
		for _, r := range regions {
			e.region(r)
		}
	case p.RecordBatches == nil:
		e.nullLen32()
	default:
		e.bytesLen(int64(len(p.RecordBatches)))
		e.buf = append(e.buf, p.RecordBatches...)
	}
	if !e.flexible {
		return
	}
	de, cl, sn := &p.DivergingEpoch, &p.CurrentLeader, &p.SnapshotID
	hasDE := de.Epoch != -1 || de.EndOffset != -1 || de.UnknownTags.Len() > 0
	hasCL := cl.LeaderID != -1 || cl.LeaderEpoch != -1 || cl.UnknownTags.Len() > 0
	hasSN := sn.EndOffset != -1 || sn.Epoch != -1 || sn.UnknownTags.Len() > 0
	e.uvarint(uint32(t2i(hasDE) + t2i(hasCL) + t2i(hasSN) + p.UnknownTags.Len()))
	if hasDE {
		e.tagged(0, func(e *encoder) { e.i32(de.Epoch); e.i64(de.EndOffset); e.tagsWithCount(&de.UnknownTags) })
	}
	if hasCL {
		e.tagged(1, func(e *encoder) { e.i32(cl.LeaderID); e.i32(cl.LeaderEpoch); e.tagsWithCount(&cl.UnknownTags) })
	}
	if hasSN {
		e.tagged(2, func(e *encoder) { e.i64(sn.EndOffset); e.i32(sn.Epoch); e.tagsWithCount(&sn.UnknownTags) })
	}
	e.buf = p.UnknownTags.AppendEach(e.buf)
}

// tagged writes one tagged field: uvarint tag, uvarint size, then the
// field's bytes as written by body (KIP-482). The body is written first and
// then moved after its size prefix.
func (e *encoder) tagged(tag uint32, body func(e *encoder)) {
	e.uvarint(tag)
	at := len(e.buf)
	body(e)
	n := len(e.buf) - at
	var tmp [5]byte
	pre := binary.AppendUvarint(tmp[:0], uint64(n))
	e.buf = append(e.buf, pre...) // grow by len(pre)
	copy(e.buf[at+len(pre):], e.buf[at:at+n])
	copy(e.buf[at:], pre)
}

func t2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (e *encoder) i16(v int16) { e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(v)) }
func (e *encoder) i32(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }
func (e *encoder) i64(v int64) { e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v)) }

func (e *encoder) uvarint(v uint32) { e.buf = binary.AppendUvarint(e.buf, uint64(v)) }

// arrayLen: int32 before flexible versions, uvarint(n+1) after.
func (e *encoder) arrayLen(n int) {
	if e.flexible {
		e.uvarint(uint32(n) + 1)
	} else {
		e.i32(int32(n))
	}
}

// nullLen is a null array: int32 -1, or uvarint 0 when flexible.
func (e *encoder) nullLen() {
	if e.flexible {
		e.uvarint(0)
	} else {
		e.i32(-1)
	}
}

// nullLen32 is null bytes: same encoding as a null array.
func (e *encoder) nullLen32() { e.nullLen() }

// bytesLen is the length prefix of non-null bytes.
func (e *encoder) bytesLen(n int64) {
	if e.flexible {
		e.uvarint(uint32(n) + 1)
	} else {
		e.i32(int32(n))
	}
}

func (e *encoder) str(s string) {
	if e.flexible {
		e.uvarint(uint32(len(s)) + 1)
	} else {
		e.i16(int16(len(s)))
	}
	e.buf = append(e.buf, s...)
}

func (e *encoder) nullableStr(s *string) {
	if s == nil {
		if e.flexible {
			e.uvarint(0)
		} else {
			e.i16(-1)
		}
		return
	}
	e.str(*s)
}

// tagsWithCount writes a struct's unknown tags preceded by their count (the
// encoding of a struct that has no known tags of its own).
func (e *encoder) tagsWithCount(t *kmsg.Tags) {
	e.uvarint(uint32(t.Len()))
	e.buf = t.AppendEach(e.buf)
}
