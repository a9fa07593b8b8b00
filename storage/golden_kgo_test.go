package storage

import (
	"bytes"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/internal/kgocapture"
	"gregor/storage/segment"
)

// TestGoldenKgoProducerSegment appends batches exactly as a real franz-go
// kgo producer sent them (captured from kfake: every codec, idempotent
// producer, keys/values nil and empty, headers, a negative timestamp
// delta) through the leader Append path, closes the log, and parses the
// .log file with franz-go alone: kmsg.RecordBatch and kmsg.Record for the
// framing, kgo's decompressor for the records, hash/crc32 for the CRC.
// Every batch must carry its Gregor-assigned base offset and leader epoch
// and otherwise be kgo's bytes unchanged (so kgo's CRC still holds), and
// every record must be what was produced. The log then reopens with full
// recovery (every batch re-validated) and serves the same bytes.
func TestGoldenKgoProducerSegment(t *testing.T) {
	const epoch = 3
	batches := kgocapture.Batches(t)
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 20 // one segment
	dir := filepath.Join(t.TempDir(), "kgo-0")
	l := openTestLog(t, dir, cfg, OpenOptions{})
	next := int64(0)
	for i, kb := range batches {
		info, err := l.Append(bytes.Clone(kb.Bytes), AppendOptions{LeaderEpoch: epoch, LogAppendTime: -1})
		if err != nil {
			l.Close()
			t.Fatalf("append batch %d (%s): %v", i, kb.Codec.Name, err)
		}
		if info.FirstOffset != next || info.LastOffset != next+int64(len(kb.Records))-1 {
			l.Close()
			t.Fatalf("batch %d: offsets %d..%d, want from %d", i, info.FirstOffset, info.LastOffset, next)
		}
		next = info.LastOffset + 1
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(segment.Path(dir, 0, segment.LogSuffix))
	if err != nil {
		t.Fatal(err)
	}

	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	decomp := kgo.DefaultDecompressor()
	rest := data
	next = 0
	for i, kb := range batches {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(rest); err != nil {
			t.Fatalf("kmsg batch %d: %v", i, err)
		}
		size := int(b.Length) + 12
		stored := rest[:size]
		rest = rest[size:]
		// Only baseOffset (bytes 0-7) and partitionLeaderEpoch (12-15) are
		// Gregor's; the rest, CRC included, is what kgo sent.
		if size != len(kb.Bytes) || !bytes.Equal(stored[8:12], kb.Bytes[8:12]) || !bytes.Equal(stored[16:], kb.Bytes[16:]) {
			t.Fatalf("batch %d (%s): stored bytes differ from what kgo sent beyond base offset and leader epoch", i, kb.Codec.Name)
		}
		if b.FirstOffset != next || b.PartitionLeaderEpoch != epoch || b.Magic != 2 || int8(b.Attributes&7) != kb.Codec.Attr {
			t.Fatalf("batch %d (%s): offset %d (want %d), epoch %d, magic %d, attributes %#x", i, kb.Codec.Name, b.FirstOffset, next, b.PartitionLeaderEpoch, b.Magic, b.Attributes)
		}
		if crc := crc32.Checksum(stored[21:], castagnoli); uint32(b.CRC) != crc {
			t.Fatalf("batch %d (%s): CRC %08x, computed %08x", i, kb.Codec.Name, uint32(b.CRC), crc)
		}
		if b.ProducerID < 0 || b.ProducerEpoch < 0 || b.FirstSequence < 0 || int(b.NumRecords) != len(kb.Records) || b.LastOffsetDelta != b.NumRecords-1 {
			t.Fatalf("batch %d (%s): producer %d/%d seq %d, %d records (last delta %d), want %d", i, kb.Codec.Name, b.ProducerID, b.ProducerEpoch, b.FirstSequence, b.NumRecords, b.LastOffsetDelta, len(kb.Records))
		}
		raw := b.Records
		if kb.Codec.Attr != 0 {
			if raw, err = decomp.Decompress(raw, kgo.CompressionCodecType(kb.Codec.Attr)); err != nil {
				t.Fatalf("batch %d (%s): kgo decompress: %v", i, kb.Codec.Name, err)
			}
		}
		maxTs := int64(-1)
		for j, want := range kb.Records {
			var r kmsg.Record
			if err := r.ReadFrom(raw); err != nil {
				t.Fatalf("batch %d (%s) record %d: %v", i, kb.Codec.Name, j, err)
			}
			raw = raw[int(r.Length)+varintLen(r.Length):]
			off, ts := b.FirstOffset+int64(r.OffsetDelta), b.FirstTimestamp+r.TimestampDelta64
			if off != next+int64(j) || ts != want.Timestamp || !nullableEqual(r.Key, want.Key) || !nullableEqual(r.Value, want.Value) || len(r.Headers) != len(want.Headers) {
				t.Fatalf("batch %d (%s) record %d: offset %d ts %d key %q value %.20q, %d headers; want offset %d ts %d key %q value %.20q, %d headers",
					i, kb.Codec.Name, j, off, ts, r.Key, r.Value, len(r.Headers), next+int64(j), want.Timestamp, want.Key, want.Value, len(want.Headers))
			}
			for k, h := range r.Headers {
				if h.Key != want.Headers[k].Key || !nullableEqual(h.Value, want.Headers[k].Value) {
					t.Fatalf("batch %d record %d header %d: %q=%q, want %q=%q", i, j, k, h.Key, h.Value, want.Headers[k].Key, want.Headers[k].Value)
				}
			}
			maxTs = max(maxTs, want.Timestamp)
		}
		if len(raw) != 0 || b.MaxTimestamp != maxTs {
			t.Fatalf("batch %d (%s): %d bytes after the last record, max timestamp %d (want %d)", i, kb.Codec.Name, len(raw), b.MaxTimestamp, maxTs)
		}
		next += int64(b.NumRecords)
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes after the last batch", len(rest))
	}

	// Reopen without a clean-shutdown marker: recovery re-validates every
	// kgo batch and must keep all of them.
	l = openTestLog(t, dir, cfg, OpenOptions{})
	defer l.Close()
	if l.LogEndOffset() != next {
		t.Fatalf("recovered log end offset %d, want %d", l.LogEndOffset(), next)
	}
	fd, err := l.Read(0, int64(len(data)), l.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, fd); !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes back, want the %d of the segment", len(got), len(data))
	}
}

// nullableEqual is bytes.Equal that also tells null (nil) from empty.
func nullableEqual(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
