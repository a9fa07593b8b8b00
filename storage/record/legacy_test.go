package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/compress"
)

// Golden bytes written out by hand (CRC-32 IEEE computed independently
// with Python's zlib.crc32 over magic..end).
func TestLegacyMessageGolden(t *testing.T) {
	v0 := []byte{
		0, 0, 0, 0, 0, 0, 0, 7, // offset 7
		0, 0, 0, 16, // message_size
		0x1f, 0xec, 0xd7, 0x0a, // crc
		0, 0, // magic 0, attributes
		0, 0, 0, 1, 'k', // key
		0, 0, 0, 1, 'v', // value
	}
	if got := AppendLegacyMessage(nil, 7, 0, 0, 12345, []byte("k"), []byte("v")); !bytes.Equal(got, v0) {
		t.Fatalf("v0:\n got % x\nwant % x", got, v0)
	}
	v1 := []byte{
		0, 0, 0, 0, 0, 0, 0, 9,
		0, 0, 0, 24,
		0xdb, 0xa4, 0xe6, 0xe2,
		1, 0,
		0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, // 1700000000000
		0xff, 0xff, 0xff, 0xff, // null key
		0, 0, 0, 2, 'h', 'i',
	}
	if got := AppendLegacyMessage(nil, 9, 1, 0, 1700000000000, nil, []byte("hi")); !bytes.Equal(got, v1) {
		t.Fatalf("v1:\n got % x\nwant % x", got, v1)
	}
	// franz-go's kmsg.MessageV1 (an independent codec) reads it back.
	var km kmsg.MessageV1
	if err := km.ReadFrom(v1); err != nil {
		t.Fatal(err)
	}
	if km.Offset != 9 || km.Timestamp != 1700000000000 || km.Key != nil || string(km.Value) != "hi" || uint32(km.CRC) != 0xdba4e6e2 {
		t.Fatalf("kmsg read %+v", km)
	}
	set, err := ParseLegacySet(append(bytes.Clone(v0[:12+16]), v0...), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Messages) != 2 || set.Magic != 0 || set.Codec != CodecNone || set.Messages[0].Timestamp != NoTimestamp || string(set.Messages[1].Key) != "k" {
		t.Fatalf("parsed %+v", set)
	}
}

type legacyRec struct {
	key, value string
	ts         int64
}

func legacyRecs(n int) []legacyRec {
	out := make([]legacyRec, n)
	for i := range out {
		out[i] = legacyRec{fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d-%s", i, bytes.Repeat([]byte("x"), i*10)), 1_600_000_000_000 + int64(i)}
	}
	return out
}

// wrapLegacy builds a compressed wrapper as an old producer writes it:
// inner offsets relative 0..n-1 for magic 1 (wrapperOff the last
// absolute offset), absolute for magic 0.
func wrapLegacy(t testing.TB, magic int8, codec Codec, wrapperOff int64, innerOffs []int64, recs []legacyRec) []byte {
	t.Helper()
	var inner []byte
	for i, r := range recs {
		inner = AppendLegacyMessage(inner, innerOffs[i], magic, 0, r.ts, []byte(r.key), []byte(r.value))
	}
	value, err := compress.Encode(int8(codec), nil, inner)
	if err != nil {
		t.Fatal(err)
	}
	if magic == 0 && codec == CodecLZ4 {
		if err := compress.BreakLegacyLZ4Checksum(value); err != nil {
			t.Fatal(err)
		}
	}
	return AppendLegacyMessage(nil, wrapperOff, magic, int8(codec), recs[len(recs)-1].ts, nil, value)
}

func seq(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

// Each codec the old formats allow, both magics: the wrapper parses into
// its inner messages, which convert to a record batch holding them.
func TestLegacyWrapperEachCodec(t *testing.T) {
	recs := legacyRecs(5)
	for _, magic := range []int8{0, 1} {
		for _, codec := range []Codec{CodecGzip, CodecSnappy, CodecLZ4} {
			t.Run(fmt.Sprintf("v%d-%s", magic, codec), func(t *testing.T) {
				in := wrapLegacy(t, magic, codec, 4, seq(0, 5), recs)
				set, err := ParseLegacySet(in, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				if set.Magic != magic || set.Codec != codec || len(set.Messages) != len(recs) {
					t.Fatalf("set magic %d codec %s, %d messages", set.Magic, set.Codec, len(set.Messages))
				}
				batch, err := LegacyToBatch(set, set.Codec)
				if err != nil {
					t.Fatal(err)
				}
				h, b, err := Validate(batch)
				if err != nil {
					t.Fatal(err)
				}
				if h.Codec() != codec || h.RecordCount != 5 {
					t.Fatalf("batch codec %s count %d", h.Codec(), h.RecordCount)
				}
				i := 0
				err = Records(h, b, 1<<20, func(r *Record) error {
					want := recs[i]
					ts := want.ts
					if magic == 0 {
						ts = NoTimestamp
					}
					if string(r.Key) != want.key || string(r.Value) != want.value || r.Timestamp(&h) != ts || r.OffsetDelta != int32(i) {
						t.Errorf("record %d: %s=%s@%d delta %d", i, r.Key, r.Value, r.Timestamp(&h), r.OffsetDelta)
					}
					i++
					return nil
				})
				if err != nil || i != 5 {
					t.Fatalf("records: %v (%d)", err, i)
				}
			})
		}
	}
}

// Down-conversion of every codec to both magics, parsed back by the
// legacy parser (and inner offsets checked as the old consumers read them).
func TestDownConvert(t *testing.T) {
	recs := make([]BatchRecord, 4)
	for i := range recs {
		recs[i] = BatchRecord{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i)), TimestampDelta: int64(i)}
	}
	recs[2].Key = nil // null key kept
	for _, magic := range []int8{0, 1} {
		for _, codec := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4} {
			t.Run(fmt.Sprintf("v%d-%s", magic, codec), func(t *testing.T) {
				batch, err := BuildBatch(BatchOptions{BaseOffset: 100, BaseTimestamp: 5000, Codec: codec}, recs)
				if err != nil {
					t.Fatal(err)
				}
				// Fetch from offset 101: an uncompressed batch drops record 100.
				out, err := DownConvert([]byte("prefix"), batch, magic, 101, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				if string(out[:6]) != "prefix" {
					t.Fatal("dst prefix lost")
				}
				out = out[6:]
				shallow, err := parseLegacyMessages(out, nil)
				if err != nil {
					t.Fatal(err)
				}
				var msgs []LegacyMessage
				wantFirst := int64(101)
				if codec == CodecNone {
					msgs = shallow
					for i, m := range msgs {
						if m.Offset != 101+int64(i) {
							t.Fatalf("message %d at offset %d", i, m.Offset)
						}
					}
				} else {
					wantFirst = 100
					if len(shallow) != 1 || shallow[0].Codec() != codec || shallow[0].Offset != 103 {
						t.Fatalf("wrapper: %d messages, %+v", len(shallow), shallow)
					}
					set, err := ParseLegacySet(out, 1<<20)
					if err != nil {
						t.Fatal(err)
					}
					msgs = set.Messages
					for i, m := range msgs {
						want := 100 + int64(i) // magic 0: absolute
						if magic == 1 {
							want = int64(i) // relative to the first
						}
						if m.Offset != want {
							t.Fatalf("inner %d offset %d want %d", i, m.Offset, want)
						}
					}
				}
				if want := int(104 - wantFirst); len(msgs) != want {
					t.Fatalf("%d messages, want %d", len(msgs), want)
				}
				for i, m := range msgs {
					r := recs[int(wantFirst-100)+i]
					ts := 5000 + int64(r.TimestampDelta)
					if magic == 0 {
						ts = NoTimestamp
					}
					if m.Magic != magic || !bytes.Equal(m.Key, r.Key) || (m.Key == nil) != (r.Key == nil) || !bytes.Equal(m.Value, r.Value) || m.Timestamp != ts {
						t.Fatalf("message %d: %+v", i, m)
					}
				}
			})
		}
	}
}

func TestDownConvertDropsAndRefuses(t *testing.T) {
	ctl, err := BuildBatch(BatchOptions{Control: true, Transactional: true, Producer: &Producer{ID: 1}}, []BatchRecord{EndTxnMarker(true, 0)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := DownConvert(nil, ctl, 1, 0, 1<<20)
	if err != nil || len(out) != 0 {
		t.Fatalf("control batch: %d bytes, %v", len(out), err)
	}
	z, err := BuildBatch(BatchOptions{Codec: CodecZstd}, []BatchRecord{{Value: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DownConvert(nil, z, 1, 0, 1<<20); !errors.Is(err, ErrDownConvertZstd) {
		t.Fatalf("zstd: %v", err)
	}
	// LogAppendTime: the append time and the timestamp-type bit survive in v1.
	lat, err := BuildBatch(BatchOptions{Codec: CodecGzip, LogAppendTime: true, AppendTime: 777, BaseTimestamp: 1}, []BatchRecord{{Value: []byte("a")}, {Value: []byte("b")}})
	if err != nil {
		t.Fatal(err)
	}
	out, err = DownConvert(nil, lat, 1, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	set, err := ParseLegacySet(out, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range set.Messages {
		if m.Timestamp != 777 || !m.IsLogAppendTime() {
			t.Fatalf("LogAppendTime message %+v", m)
		}
	}
}

func TestParseLegacyErrors(t *testing.T) {
	recs := legacyRecs(3)
	good := AppendLegacyMessage(nil, 0, 1, 0, 1, []byte("k"), []byte("v"))
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-1] ^= 1
	short := bytes.Clone(good)
	binary.BigEndian.PutUint32(short[8:], 10)
	// Inner message with a bad CRC inside a valid wrapper.
	var inner []byte
	inner = AppendLegacyMessage(inner, 0, 1, 0, 1, nil, []byte("a"))
	inner[len(inner)-1] ^= 1
	gz, _ := compress.Encode(compress.Gzip, nil, inner)
	innerBadCRC := AppendLegacyMessage(nil, 0, 1, int8(CodecGzip), 1, nil, gz)
	// Inner compressed message.
	nested := AppendLegacyMessage(nil, 0, 1, int8(CodecGzip), 1, nil, []byte("zz"))
	gz2, _ := compress.Encode(compress.Gzip, nil, nested)
	innerCompressed := AppendLegacyMessage(nil, 0, 1, int8(CodecGzip), 1, nil, gz2)
	// Inner magic 0 inside a magic-1 wrapper.
	m0 := AppendLegacyMessage(nil, 0, 0, 0, 0, nil, []byte("a"))
	gz3, _ := compress.Encode(compress.Gzip, nil, m0)
	mixedInner := AppendLegacyMessage(nil, 0, 1, int8(CodecGzip), 1, nil, gz3)
	// An expansion bomb: 2 MiB of zeros, bound 1 MiB.
	bombInner := AppendLegacyMessage(nil, 0, 1, 0, 1, nil, make([]byte, 2<<20))
	gz4, _ := compress.Encode(compress.Gzip, nil, bombInner)
	bomb := AppendLegacyMessage(nil, 0, 1, int8(CodecGzip), 1, nil, gz4)
	emptyGz, _ := compress.Encode(compress.Gzip, nil, nil)

	for _, tc := range []struct {
		name    string
		in      []byte
		corrupt bool // else invalid
		tooBig  bool
	}{
		{"bad crc", badCRC, true, false},
		{"size below overhead", short, true, false},
		{"inner bad crc", innerBadCRC, true, false},
		{"expansion past bound", bomb, true, true},
		{"wrapper offset below last inner", wrapLegacy(t, 1, CodecGzip, 1, seq(0, 3), recs), false, false},
		{"inner compressed", innerCompressed, false, false},
		{"inner magic differs", mixedInner, false, false},
		{"mixed magic", append(bytes.Clone(good), m0...), false, false},
		{"compressed not alone", append(wrapLegacy(t, 1, CodecGzip, 2, seq(0, 3), recs), good...), false, false},
		{"null wrapper value", AppendLegacyMessage(nil, 0, 1, int8(CodecGzip), 1, nil, nil), false, false},
		{"zstd wrapper", AppendLegacyMessage(nil, 0, 1, int8(CodecZstd), 1, nil, []byte("x")), false, false},
		{"no inner messages", AppendLegacyMessage(nil, 0, 1, int8(CodecGzip), 1, nil, emptyGz), false, false},
		{"only a partial message", good[:len(good)-1], false, false},
	} {
		_, err := ParseLegacySet(tc.in, 1<<20)
		switch {
		case err == nil:
			t.Errorf("%s: accepted", tc.name)
		case tc.corrupt && !IsCorrupt(err), !tc.corrupt && !IsInvalid(err):
			t.Errorf("%s: %T %v", tc.name, err, err)
		case tc.tooBig && !errors.Is(err, compress.ErrTooLarge):
			t.Errorf("%s: %v, want ErrTooLarge", tc.name, err)
		}
	}
	// Accepted as Kafka accepts them: inner offsets not 0..n-1 (older
	// clients; offsets are reassigned), a v1 wrapper offset of 0
	// (librdkafka), a partial trailing message (ignored).
	for name, in := range map[string][]byte{
		"inner offsets all zero": wrapLegacy(t, 1, CodecGzip, 5, []int64{0, 0, 0}, recs),
		"wrapper offset zero":    wrapLegacy(t, 1, CodecSnappy, 0, seq(0, 3), recs),
		"partial trailing":       append(bytes.Clone(good), good[:20]...),
	} {
		if _, err := ParseLegacySet(in, 1<<20); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
