package handlers

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/storage/compress"
	"gregor/storage/record"
)

// legacySet builds a v0/v1 message set of n messages as an old producer
// writes it: plain messages (offsets 0..n-1), or one wrapper with codec
// (inner offsets relative for magic 1, absolute for magic 0).
func legacySet(t testing.TB, magic int8, codec record.Codec, n int, ts int64) []byte {
	t.Helper()
	var msgs []byte
	for i := 0; i < n; i++ {
		msgs = record.AppendLegacyMessage(msgs, int64(i), magic, 0, ts+int64(i), []byte(fmt.Sprintf("k%d", i)), []byte(fmt.Sprintf("v%d", i)))
	}
	if codec == record.CodecNone {
		return msgs
	}
	value, err := compress.Encode(int8(codec), nil, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if magic == 0 && codec == record.CodecLZ4 {
		if err := compress.BreakLegacyLZ4Checksum(value); err != nil {
			t.Fatal(err)
		}
	}
	return record.AppendLegacyMessage(nil, int64(n-1), magic, int8(codec), ts+int64(n-1), nil, value)
}

// legacyValues parses a Fetch v0-v3 records field (whole messages; a
// partial trailing one dropped, as clients do) into "offset:key=value@ts".
func legacyValues(t *testing.T, magic int8, b []byte) []string {
	t.Helper()
	var out []string
	for len(b) >= record.LogOverhead {
		// Walk the shallow messages one by one.
		size := int(int32(uint32(b[8])<<24 | uint32(b[9])<<16 | uint32(b[10])<<8 | uint32(b[11])))
		if record.LogOverhead+size > len(b) {
			break
		}
		one, err := record.ParseLegacySet(b[:record.LogOverhead+size], 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		if one.Magic != magic {
			t.Fatalf("magic %d, want %d", one.Magic, magic)
		}
		wrapperOff := int64(0)
		for i := 0; i < 8; i++ {
			wrapperOff = wrapperOff<<8 | int64(b[i])
		}
		for i, m := range one.Messages {
			off := m.Offset
			if one.Codec != record.CodecNone && magic == 1 {
				off = wrapperOff - int64(len(one.Messages)-1-i) // relative inner offsets
			}
			out = append(out, fmt.Sprintf("%d:%s=%s@%d", off, m.Key, m.Value, m.Timestamp))
		}
		b = b[record.LogOverhead+size:]
	}
	return out
}

func TestProduceLegacyFormatsThenFetchEveryFormat(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4} {
		t.Run(codec.String(), func(t *testing.T) {
			e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
			// Produce v0 carries magic 0, v2 magic 1 (as clients of that era).
			if p := e.produce(0, 1, tpA, legacySet(t, 0, codec, 3, 0)); p.ErrorCode != 0 || p.BaseOffset != 0 {
				t.Fatalf("produce v0: %+v", p)
			}
			if p := e.produce(2, 1, tpA, legacySet(t, 1, codec, 2, 5000)); p.ErrorCode != 0 || p.BaseOffset != 3 {
				t.Fatalf("produce v2: %+v", p)
			}
			// A new client (v2 batches) on the same partition.
			if p := e.produce(9, 1, tpA, codecBatch(t, codec, 2, 9000, 2)); p.ErrorCode != 0 || p.BaseOffset != 5 {
				t.Fatalf("produce v9: %+v", p)
			}
			// Stored as record batches (magic 2) with the producer's codec.
			fr := decodeFetch(t, 12, e.call(1, 12, fetchReq(tpA, 0, 0, 0)))
			hs := batches(t, fr.Topics[0].Partitions[0].RecordBatches)
			if len(hs) != 3 || hs[0].Codec() != codec || hs[1].BaseOffset != 3 || hs[1].RecordCount != 2 {
				t.Fatalf("stored batches %+v", hs)
			}
			want1 := []string{"0:k0=v0@-1", "1:k1=v1@-1", "2:k2=v2@-1", "3:k0=v0@5000", "4:k1=v1@5001", "5:k0=aa@9000", "6:k1=bb@9001"}
			for _, c := range []struct {
				version int16
				magic   int8
			}{{0, 0}, {1, 0}, {2, 1}, {3, 1}} {
				// Consume as an old client does: the response may cut the
				// last messages (converted data is larger than the stored
				// batches, KIP-283), so fetch again from the next offset and
				// skip messages below the fetch offset (whole wrappers).
				var got []string
				for next, round := int64(0), 0; next < 7; round++ {
					if round > 10 {
						t.Fatalf("fetch v%d: no progress past %d", c.version, next)
					}
					fr := decodeFetch(t, c.version, e.call(1, c.version, fetchReq(tpA, next, 0, 0)))
					fp := fr.Topics[0].Partitions[0]
					if fp.ErrorCode != 0 || fp.HighWatermark != 7 {
						t.Fatalf("fetch v%d: error %d hw %d", c.version, fp.ErrorCode, fp.HighWatermark)
					}
					for _, m := range legacyValues(t, c.magic, fp.RecordBatches) {
						var off int64
						fmt.Sscanf(m, "%d:", &off)
						if off >= next {
							got = append(got, m)
							next = off + 1
						}
					}
				}
				want := want1
				if c.magic == 0 {
					want = []string{"0:k0=v0@-1", "1:k1=v1@-1", "2:k2=v2@-1", "3:k0=v0@-1", "4:k1=v1@-1", "5:k0=aa@-1", "6:k1=bb@-1"}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("fetch v%d:\n got %v\nwant %v", c.version, got, want)
				}
			}
			// Fetch v1 from the middle of an uncompressed batch drops the
			// records before the fetch offset (Kafka's downConvert).
			fr = decodeFetch(t, 1, e.call(1, 1, fetchReq(tpA, 4, 0, 0)))
			got := legacyValues(t, 0, fr.Topics[0].Partitions[0].RecordBatches)
			if codec == record.CodecNone && (len(got) == 0 || got[0] != "4:k1=v1@-1") {
				t.Fatalf("fetch from 4: %v", got)
			}
			if codec != record.CodecNone && (len(got) == 0 || got[0] != "3:k0=v0@-1") {
				t.Fatalf("fetch from 4 (compressed, whole wrapper): %v", got)
			}
		})
	}
}

func TestProduceLegacyRejectsAndAppendsNothing(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.MaxMessageBytes = 1 << 20 // decompression bound max(64 MiB, 32 × this)
	e := newDataEnv(t, cfg, tpA)
	bad := legacySet(t, 1, record.CodecNone, 2, 1)
	bad[len(bad)-1] ^= 1 // the second message's CRC no longer matches
	big := record.AppendLegacyMessage(nil, 0, 1, 0, 1, nil, make([]byte, 70<<20))
	gz, _ := compress.Encode(compress.Gzip, nil, big)
	bomb := record.AppendLegacyMessage(nil, 0, 1, int8(record.CodecGzip), 1, nil, gz)
	for _, c := range []struct {
		name    string
		version int16
		in      []byte
		want    *kerr.Error
	}{
		{"bad crc", 2, bad, kerr.CorruptMessage},
		// a magic-1 wrapper whose offset is below its last inner offset
		{"bad wrapper offset", 2, func() []byte {
			var inner []byte
			for i := 0; i < 3; i++ {
				inner = record.AppendLegacyMessage(inner, int64(i), 1, 0, 1, nil, []byte("x"))
			}
			v, _ := compress.Encode(compress.Gzip, nil, inner)
			return record.AppendLegacyMessage(nil, 1, 1, int8(record.CodecGzip), 1, nil, v)
		}(), kerr.InvalidRecord},
		{"expands past its bound", 1, bomb, kerr.CorruptMessage},
		{"magic 1 at v3", 3, legacySet(t, 1, record.CodecNone, 1, 1), kerr.InvalidRecord},
		{"LogAppendTime claimed without timestamp", 2, record.AppendLegacyMessage(nil, 0, 1, 0x08, -1, nil, []byte("x")), kerr.InvalidTimestamp},
	} {
		if p := e.produce(c.version, 1, tpA, c.in); p.ErrorCode != c.want.Code {
			t.Errorf("%s: error %d, want %s", c.name, p.ErrorCode, c.want.Message)
		}
	}
	fr := decodeFetch(t, 12, e.call(1, 12, fetchReq(tpA, 0, 0, 0)))
	if fp := fr.Topics[0].Partitions[0]; fp.HighWatermark != 0 || len(fp.RecordBatches) != 0 {
		t.Fatalf("something was appended: hw %d, %d bytes", fp.HighWatermark, len(fp.RecordBatches))
	}
}

// A LogAppendTime topic overwrites the old producer's timestamps; the
// topic's compression.type recompresses the converted batch.
func TestProduceLegacyTopicTimestampAndCodec(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.LogAppendTime = true
	cfg.CompressionType = "snappy"
	e := newDataEnv(t, cfg, tpA)
	p := e.produce(2, 1, tpA, legacySet(t, 1, record.CodecGzip, 3, 10))
	if p.ErrorCode != 0 || p.LogAppendTime <= 10 {
		t.Fatalf("produce %+v", p)
	}
	fr := decodeFetch(t, 12, e.call(1, 12, fetchReq(tpA, 0, 0, 0)))
	hs := batches(t, fr.Topics[0].Partitions[0].RecordBatches)
	if len(hs) != 1 || hs[0].Codec() != record.CodecSnappy || !hs[0].IsLogAppendTime() || hs[0].MaxTimestamp != p.LogAppendTime {
		t.Fatalf("stored %+v", hs)
	}
	fr = decodeFetch(t, 2, e.call(1, 2, fetchReq(tpA, 0, 0, 0)))
	set, err := record.ParseLegacySet(fr.Topics[0].Partitions[0].RecordBatches, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if set.Codec != record.CodecSnappy || len(set.Messages) != 3 || set.Messages[0].Timestamp != p.LogAppendTime || !set.Messages[0].IsLogAppendTime() {
		t.Fatalf("down-converted %+v", set)
	}
}

func TestFetchDownConversionDisabledAndZstd(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.DownConversionDisabled = true
	e := newDataEnv(t, cfg, tpA)
	e.produce(9, 1, tpA, codecBatch(t, record.CodecNone, 1, 1, 1))
	for v := int16(0); v <= 3; v++ {
		fr := decodeFetch(t, v, e.call(1, v, fetchReq(tpA, 0, 0, 0)))
		if fp := fr.Topics[0].Partitions[0]; fp.ErrorCode != kerr.UnsupportedVersion.Code {
			t.Fatalf("v%d: error %d, want UNSUPPORTED_VERSION", v, fp.ErrorCode)
		}
	}
	if fp := decodeFetch(t, 4, e.call(1, 4, fetchReq(tpA, 0, 0, 0))).Topics[0].Partitions[0]; fp.ErrorCode != 0 || len(fp.RecordBatches) == 0 {
		t.Fatalf("v4: %d, %d bytes", fp.ErrorCode, len(fp.RecordBatches))
	}
	// zstd batches cannot be down-converted.
	z := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	z.produce(9, 1, tpA, codecBatch(t, record.CodecZstd, 2, 1, 1))
	if fp := decodeFetch(t, 3, z.call(1, 3, fetchReq(tpA, 0, 0, 0))).Topics[0].Partitions[0]; fp.ErrorCode != kerr.UnsupportedCompressionType.Code {
		t.Fatalf("zstd v3: error %d", fp.ErrorCode)
	}
}

// KIP-283: the response declares max(bytes read, first converted batch);
// later batches are converted while written and cut at that length, the
// remainder an overflow header. Small records grow when converted to
// magic 1 (22+12 bytes of overhead each vs a few in a batch), so the cut
// is exercised: the client sees whole messages then a partial one.
func TestFetchDownConvertChunkedAndCut(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	const batchesN = 20
	for i := 0; i < batchesN; i++ {
		e.produce(9, 1, tpA, codecBatch(t, record.CodecNone, 50, 1000, 1))
	}
	resp := e.call(1, 3, fetchReq(tpA, 0, 0, 0))
	var streams int
	for _, c := range resp.Body.Chunks {
		if c.Stream != nil {
			streams++
		}
	}
	if streams != 1 {
		t.Fatalf("%d stream chunks, want 1", streams)
	}
	fr := decodeFetch(t, 3, resp)
	fp := fr.Topics[0].Partitions[0]
	got := legacyValues(t, 1, fp.RecordBatches)
	if len(got) == 0 || len(got) >= batchesN*50 {
		t.Fatalf("%d whole messages, want some but not all %d (cut at the declared size)", len(got), batchesN*50)
	}
	for i, g := range got {
		if !bytes.HasPrefix([]byte(g), []byte(fmt.Sprintf("%d:", i))) {
			t.Fatalf("message %d is %s", i, g)
		}
	}
	// Only control batches left to read → an overflow header only.
}

func TestListOffsetsV0(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	for i := 0; i < 3; i++ {
		e.produce(0, 1, tpA, legacySet(t, 0, record.CodecNone, 1, 0))
	}
	ask := func(ts int64, maxN int32) (int16, []int64) {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = tpA.Topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.MaxNumOffsets = tpA.Partition, ts, maxN
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := e.call(2, 0, req).Msg.(*kmsg.ListOffsetsResponse)
		resp.SetVersion(0)
		resp.AppendTo(nil)
		p := resp.Topics[0].Partitions[0]
		return p.ErrorCode, p.OldStyleOffsets
	}
	for _, c := range []struct {
		ts   int64
		maxN int32
		want string
	}{
		{-1, 1, "[3]"},
		{-1, 10, "[3 0]"},
		{-2, 10, "[0]"},
		{time.Now().Add(time.Hour).UnixMilli(), 10, "[3 0]"},
		{1, 10, "[]"}, // before any segment was written
	} {
		code, offs := ask(c.ts, c.maxN)
		if code != 0 || fmt.Sprint(offs) != c.want {
			t.Errorf("ts %d max %d: error %d offsets %v, want %s", c.ts, c.maxN, code, offs, c.want)
		}
	}
	if code, _ := ask(-3, 1); code != kerr.UnsupportedVersion.Code {
		t.Errorf("ts -3: error %d, want UNSUPPORTED_VERSION", code)
	}
}
