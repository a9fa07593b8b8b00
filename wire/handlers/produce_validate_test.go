package handlers

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/storage/record"
)

// codecBatch builds a producer-style batch of n keyed records with
// timestamps ts, ts+1, … compressed with codec.
func codecBatch(t testing.TB, codec record.Codec, n int, ts int64, valueSize int) []byte {
	t.Helper()
	recs := make([]record.BatchRecord, n)
	for i := range recs {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, valueSize)
		recs[i] = record.BatchRecord{Key: []byte(fmt.Sprintf("k%d", i)), Value: v, TimestampDelta: int64(i)}
	}
	b, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: ts, PartitionLeaderEpoch: -1, Codec: codec}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordValues decodes a batch's keys and values as "key=value" strings.
func recordValues(t testing.TB, batch []byte) []string {
	t.Helper()
	h, b, err := record.Validate(batch)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if err := record.Records(h, b, 64<<20, func(r *record.Record) error {
		out = append(out, fmt.Sprintf("%s=%s@%d", r.Key, r.Value, r.Timestamp(&h)))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

var allCodecs = []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd}

func TestValidateKeepsProducerCodecWithoutCopy(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	for _, c := range allCodecs {
		in := codecBatch(t, c, 5, 1000, 100)
		vb, rej := validateProduceBatch(cfg, 9, in, 1000)
		if rej != nil {
			t.Fatalf("%s: %+v", c, rej)
		}
		if &vb.batch[0] != &in[0] || len(vb.batch) != len(in) || vb.hdr.Codec() != c || vb.logAppendTime {
			t.Fatalf("%s: batch was copied or changed (codec %s, lat %v)", c, vb.hdr.Codec(), vb.logAppendTime)
		}
	}
}

func TestValidateRecompressesToTopicCodec(t *testing.T) {
	names := map[record.Codec]string{record.CodecNone: "uncompressed", record.CodecGzip: "gzip", record.CodecSnappy: "snappy", record.CodecLZ4: "lz4", record.CodecZstd: "zstd"}
	for _, src := range allCodecs {
		for _, dst := range allCodecs {
			in := codecBatch(t, src, 7, 5000, 300)
			want := recordValues(t, in)
			cfg := storage.DefaultLogConfig()
			cfg.CompressionType = names[dst]
			vb, rej := validateProduceBatch(cfg, 9, in, 5000)
			if rej != nil {
				t.Fatalf("%s→%s: %+v", src, dst, rej)
			}
			if vb.hdr.Codec() != dst {
				t.Fatalf("%s→%s: stored codec %s", src, dst, vb.hdr.Codec())
			}
			if (src == dst) != (&vb.batch[0] == &in[0]) {
				t.Fatalf("%s→%s: recompressed %v", src, dst, src != dst)
			}
			if got := recordValues(t, vb.batch); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s→%s: records\n got %v\nwant %v", src, dst, got, want)
			}
			if vb.hdr.RecordCount != 7 || vb.hdr.MaxTimestamp != 5006 || vb.hdr.BaseTimestamp != 5000 {
				t.Fatalf("%s→%s: header %+v", src, dst, vb.hdr)
			}
		}
	}
}

func TestValidateRecompressedTooLarge(t *testing.T) {
	// Incompressible-looking values compress badly with gzip framing; an
	// uncompressed target makes a highly compressible batch grow past
	// max.message.bytes.
	in := codecBatch(t, record.CodecZstd, 50, 1, 1000) // ~50 KB of repeated bytes, tiny compressed
	cfg := storage.DefaultLogConfig()
	cfg.MaxMessageBytes = int32(len(in) + 100)
	cfg.CompressionType = "uncompressed"
	_, rej := validateProduceBatch(cfg, 9, in, 1)
	if rej == nil || rej.err != kerr.MessageTooLarge {
		t.Fatalf("got %+v, want MESSAGE_TOO_LARGE", rej)
	}
}

func TestValidateTimestamps(t *testing.T) {
	now := int64(1_700_000_000_000)
	cfg := storage.DefaultLogConfig()
	cfg.MessageTimestampDifferenceMaxMs = 3
	// Records at now-2 … now+2: all within 3 ms.
	if _, rej := validateProduceBatch(cfg, 9, codecBatch(t, record.CodecNone, 5, now-2, 10), now); rej != nil {
		t.Fatalf("in range: %+v", rej)
	}
	// now-2 … now+5: records 6 (now+4) and 7 (now+5) are beyond 3 ms.
	for _, c := range []record.Codec{record.CodecNone, record.CodecLZ4} {
		_, rej := validateProduceBatch(cfg, 9, codecBatch(t, c, 8, now-2, 10), now)
		if rej == nil || rej.err != kerr.InvalidTimestamp || !slices.Equal(recordIndexes(rej.records), []int{6, 7}) {
			t.Fatalf("%s: got %+v, want INVALID_TIMESTAMP at records 6 and 7", c, rej)
		}
	}
	// Too old.
	if _, rej := validateProduceBatch(cfg, 9, codecBatch(t, record.CodecNone, 1, now-4, 10), now); rej == nil || rej.err != kerr.InvalidTimestamp || !slices.Equal(recordIndexes(rej.records), []int{0}) {
		t.Fatalf("old: got %+v", rej)
	}
	// LogAppendTime topics ignore the producer's timestamps.
	lat := cfg
	lat.LogAppendTime = true
	vb, rej := validateProduceBatch(lat, 9, codecBatch(t, record.CodecNone, 3, 5, 10), now)
	if rej != nil || !vb.logAppendTime {
		t.Fatalf("LogAppendTime topic: %+v %+v", vb, rej)
	}
	// A producer must not claim LogAppendTime.
	b, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: now, PartitionLeaderEpoch: -1, LogAppendTime: true, AppendTime: now}, []record.BatchRecord{{Value: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej := validateProduceBatch(storage.DefaultLogConfig(), 9, b, now); rej == nil || rej.err != kerr.InvalidTimestamp {
		t.Fatalf("client LogAppendTime: got %+v", rej)
	}
}

func TestValidateRewritesMaxTimestamp(t *testing.T) {
	in := codecBatch(t, record.CodecNone, 4, 100, 10) // records at 100..103
	binary.BigEndian.PutUint64(in[record.OffMaxTimestamp:], 99999)
	binary.BigEndian.PutUint32(in[record.OffCRC:], record.ComputeCRC(in))
	vb, rej := validateProduceBatch(storage.DefaultLogConfig(), 9, in, 100)
	if rej != nil {
		t.Fatal(rej)
	}
	h, _, err := record.Validate(vb.batch)
	if err != nil || h.MaxTimestamp != 103 || vb.hdr.MaxTimestamp != 103 {
		t.Fatalf("maxTimestamp %d / %d (%v), want 103", h.MaxTimestamp, vb.hdr.MaxTimestamp, err)
	}
}

func TestValidateRejections(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	good := codecBatch(t, record.CodecNone, 2, 1, 10)
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)-1] ^= 0xff
	ctl, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, Control: true}, []record.BatchRecord{{Key: []byte{0, 0, 0, 0}, Value: []byte{0, 0, 0, 0, 0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	noKey, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1}, []record.BatchRecord{{Key: []byte("a"), Value: []byte("1")}, {Value: []byte("2")}})
	if err != nil {
		t.Fatal(err)
	}
	compact := cfg
	compact.Compact = true
	magic1 := bytes.Clone(good)
	magic1[record.OffMagic] = 1
	// A zstd bomb: 40 MiB of zeros in a few KiB, limit 64 MiB/… shrink it.
	small := cfg
	small.MaxMessageBytes = 1 << 20
	bomb := codecBatch(t, record.CodecZstd, 1, 1, 70<<20)
	for _, tc := range []struct {
		name    string
		cfg     storage.LogConfig
		version int16
		in      []byte
		want    *kerr.Error
		records []int // indexes of the records at fault
	}{
		{"empty", cfg, 9, nil, kerr.InvalidRecord, nil},
		{"crc", cfg, 9, corrupt, kerr.CorruptMessage, nil},
		{"magic 1 (as legacy: bad crc)", cfg, 2, magic1, kerr.CorruptMessage, nil},
		{"magic 1 at produce v3", cfg, 3, record.AppendLegacyMessage(nil, 0, 1, 0, 1, nil, []byte("v")), kerr.InvalidRecord, nil},
		{"two batches", cfg, 9, append(bytes.Clone(good), good...), kerr.InvalidRecord, nil},
		{"control", cfg, 9, ctl, kerr.InvalidRecord, nil},
		{"zstd before v7", cfg, 6, codecBatch(t, record.CodecZstd, 1, 1, 10), kerr.UnsupportedCompressionType, nil},
		{"no key on compacted topic", compact, 9, noKey, kerr.InvalidRecord, []int{1}},
		{"decompression bomb", small, 9, bomb, kerr.CorruptMessage, nil},
	} {
		_, rej := validateProduceBatch(tc.cfg, tc.version, tc.in, 1)
		if rej == nil || rej.err != tc.want || !slices.Equal(recordIndexes(rej.records), tc.records) || rej.detail == "" {
			t.Errorf("%s: got %+v, want %s at records %v", tc.name, rej, tc.want.Message, tc.records)
		}
	}
	// A zstd batch at v7 is fine.
	if _, rej := validateProduceBatch(cfg, 7, codecBatch(t, record.CodecZstd, 1, 1, 10), 1); rej != nil {
		t.Errorf("zstd v7: %+v", rej)
	}
}

// An uncompressed batch on a CreateTime topic keeping the producer's codec
// is validated without allocating (no per-record allocation on the hot
// path).
func TestValidateUncompressedDoesNotAllocate(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.MessageTimestampDifferenceMaxMs = 1 << 40
	in := codecBatch(t, record.CodecNone, 100, 1000, 100)
	allocs := testing.AllocsPerRun(50, func() {
		if _, rej := validateProduceBatch(cfg, 9, in, 1000); rej != nil {
			t.Fatal(rej)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per batch, want 0", allocs)
	}
}

// Through the handler, actor and storage: LogAppendTime is stamped and
// answered, and compression.type changes what is stored.
func TestProduceLogAppendTimeAndTopicCodec(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.LogAppendTime = true
	cfg.CompressionType = "lz4"
	e := newDataEnv(t, cfg, tpA)
	before := time.Now().UnixMilli()
	p := e.produce(9, 1, tpA, codecBatch(t, record.CodecGzip, 3, 42, 50))
	after := time.Now().UnixMilli()
	if p.ErrorCode != 0 || p.BaseOffset != 0 || p.LogAppendTime < before || p.LogAppendTime > after {
		t.Fatalf("produce %+v (window %d..%d)", p, before, after)
	}
	fr := decodeFetch(t, 12, e.call(1, 12, fetchReq(tpA, 0, 0, 0)))
	fp := fr.Topics[0].Partitions[0]
	hs := batches(t, fp.RecordBatches)
	if len(hs) != 1 || hs[0].Codec() != record.CodecLZ4 || !hs[0].IsLogAppendTime() || hs[0].MaxTimestamp != p.LogAppendTime || hs[0].BaseTimestamp != 42 {
		t.Fatalf("stored batch %+v", hs)
	}
	vals := recordValues(t, fp.RecordBatches)
	if len(vals) != 3 || vals[2] != fmt.Sprintf("k2=%s@%d", bytes.Repeat([]byte{'c'}, 50), p.LogAppendTime) {
		t.Fatalf("records %v", vals)
	}
	// Time lookups use the append time: the producer's timestamp 42 is gone.
	lookup := func(ts int64) (int64, int64) {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = tpA.Topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp, rp.CurrentLeaderEpoch = ts, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		r := e.call(2, 7, req).Msg.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
		return r.Offset, r.Timestamp
	}
	if off, ts := lookup(43); off != 0 || ts != p.LogAppendTime {
		t.Fatalf("lookup 43: offset %d ts %d, want 0 at %d", off, ts, p.LogAppendTime)
	}
	if off, _ := lookup(p.LogAppendTime + 1); off != -1 {
		t.Fatalf("lookup after the append time: offset %d, want -1", off)
	}
	// Out-of-range timestamps answer INVALID_TIMESTAMP with the records at fault (v8+).
	cfg2 := storage.DefaultLogConfig()
	cfg2.MessageTimestampDifferenceMaxMs = 60_000
	tpB := storage.TopicPartition{Topic: "ts", Partition: 0}
	e2 := newDataEnv(t, cfg2, tpB)
	p = e2.produce(9, 1, tpB, codecBatch(t, record.CodecNone, 2, 1000, 10))
	if p.ErrorCode != kerr.InvalidTimestamp.Code || len(p.ErrorRecords) != 2 || p.ErrorRecords[0].RelativeOffset != 0 || p.ErrorRecords[1].RelativeOffset != 1 || p.ErrorMessage == nil {
		t.Fatalf("old timestamps: %+v", p)
	}
}
