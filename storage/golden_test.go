package storage

import (
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/compress"
	"gregor/storage/record"
	"gregor/storage/segment"
)

// TestGoldenSegmentParsesWithKmsg writes batches encoded by franz-go's kmsg
// (every codec) and parses the resulting .log file back with kmsg alone:
// Kafka's on-disk format is the wire format, offsets assigned in place.
// The .index and .timeindex files are checked entry by entry against
// positions and timestamps computed from that parse.
func TestGoldenSegmentParsesWithKmsg(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.IndexIntervalBytes = 300
	l := newTestLog(t, cfg)
	codecs := []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd}
	for i := 0; i < 21; i++ { // 21: the last batch is not indexed, so Close adds the final time entry
		b := makeBatch(t, batchSpec{n: 3 + i%4, valueSize: 30 + i, baseTs: 1_700_000_000_000 + int64(i)*10, codec: codecs[i%len(codecs)], tag: byte(i)})
		if _, err := l.Append(b, AppendOptions{LeaderEpoch: 2, LogAppendTime: -1}); err != nil {
			t.Fatalf("append %d (%s): %v", i, codecs[i%len(codecs)], err)
		}
	}
	l.Close()
	data, err := os.ReadFile(segment.Path(l.Dir(), 0, segment.LogSuffix))
	if err != nil {
		t.Fatal(err)
	}
	var wantIdx, wantTidx []byte
	var pos, sinceIdx, maxTs, maxTsOff int64 = 0, 0, -1, -1
	next := int64(0)
	for i := 0; len(data) > 0; i++ {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(data); err != nil {
			t.Fatalf("kmsg batch %d: %v", i, err)
		}
		size := int64(b.Length) + 12
		if b.FirstOffset != next || b.PartitionLeaderEpoch != 2 || b.Magic != 2 || uint32(b.CRC) != record.ComputeCRC(data[:size]) {
			t.Fatalf("batch %d: offset %d (want %d) epoch %d magic %d", i, b.FirstOffset, next, b.PartitionLeaderEpoch, b.Magic)
		}
		raw := b.Records
		if codec := b.Attributes & 7; codec != 0 {
			if int(codec) != int(codecs[i%len(codecs)]) {
				t.Fatalf("batch %d codec %d", i, codec)
			}
			if raw, err = compress.Decode(int8(codec), raw, 1<<20); err != nil {
				t.Fatal(err)
			}
		}
		for j := 0; j < int(b.NumRecords); j++ {
			var r kmsg.Record
			if err := r.ReadFrom(raw); err != nil {
				t.Fatalf("batch %d record %d: %v", i, j, err)
			}
			n := int(r.Length) + varintLen(r.Length)
			raw = raw[n:]
			if string(r.Key) != fmt.Sprintf("k%d", j) || len(r.Value) != 30+i || r.Value[0] != byte(i)+byte(j) || r.OffsetDelta != int32(j) {
				t.Fatalf("batch %d record %d: key %q value[0] %d", i, j, r.Key, r.Value[0])
			}
		}
		// Expected index entries, by Kafka's rule (see segment.Append).
		last := b.FirstOffset + int64(b.LastOffsetDelta)
		if b.MaxTimestamp > maxTs {
			maxTs, maxTsOff = b.MaxTimestamp, last
		}
		if sinceIdx > int64(cfg.IndexIntervalBytes) {
			wantIdx = binary.BigEndian.AppendUint32(wantIdx, uint32(last))
			wantIdx = binary.BigEndian.AppendUint32(wantIdx, uint32(pos))
			wantTidx = binary.BigEndian.AppendUint64(wantTidx, uint64(maxTs))
			wantTidx = binary.BigEndian.AppendUint32(wantTidx, uint32(maxTsOff))
			sinceIdx = 0
		}
		sinceIdx += size
		next = last + 1
		pos += size
		data = data[size:]
	}
	// Close appends the final time index entry (Kafka's
	// onBecomeInactiveSegment) unless the last entry already has the maximum.
	if n := len(wantTidx); n == 0 || int64(binary.BigEndian.Uint64(wantTidx[n-12:])) < maxTs {
		wantTidx = binary.BigEndian.AppendUint64(wantTidx, uint64(maxTs))
		wantTidx = binary.BigEndian.AppendUint32(wantTidx, uint32(maxTsOff))
	}
	gotIdx, _ := os.ReadFile(segment.Path(l.Dir(), 0, segment.IndexSuffix))
	gotTidx, _ := os.ReadFile(segment.Path(l.Dir(), 0, segment.TimeIndexSuffix))
	if string(gotIdx) != string(wantIdx) || len(wantIdx) == 0 {
		t.Fatalf(".index\n got %x\nwant %x", gotIdx, wantIdx)
	}
	if string(gotTidx) != string(wantTidx) {
		t.Fatalf(".timeindex\n got %x\nwant %x", gotTidx, wantTidx)
	}
}

func varintLen(v int32) int {
	u := uint32(v<<1) ^ uint32(v>>31)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}
