package coordinator

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// be builds big-endian bytes from int16/int32/int64/string(int16 length)
// pieces, to spell Kafka's schemas out by hand.
type be struct{ b []byte }

func (w *be) i16(v int16) *be { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)); return w }
func (w *be) i32(v int32) *be { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)); return w }
func (w *be) i64(v int64) *be { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)); return w }
func (w *be) str(s string) *be {
	w.i16(int16(len(s)))
	w.b = append(w.b, s...)
	return w
}
func (w *be) byts(s string) *be {
	w.i32(int32(len(s)))
	w.b = append(w.b, s...)
	return w
}

func TestRecordGoldenBytes(t *testing.T) {
	// OffsetCommitKey v1: version, group, topic, partition.
	want := (&be{}).i16(1).str("grp").str("orders").i32(7).b
	if got := OffsetKey("grp", TopicPartition{"orders", 7}); !bytes.Equal(got, want) {
		t.Errorf("OffsetCommitKey\n got %x\nwant %x", got, want)
	}
	// OffsetCommitValue v3: version, offset, leader_epoch, metadata, commit_timestamp.
	ts := time.UnixMilli(1_700_000_000_123)
	want = (&be{}).i16(3).i64(42).i32(5).str("md").i64(ts.UnixMilli()).b
	if got := OffsetValue(OffsetAndMetadata{Offset: 42, LeaderEpoch: 5, Metadata: "md", CommitTime: ts}); !bytes.Equal(got, want) {
		t.Errorf("OffsetCommitValue v3\n got %x\nwant %x", got, want)
	}
	// v1 with an expire timestamp: version, offset, metadata, commit, expire.
	exp := ts.Add(time.Hour)
	want = (&be{}).i16(1).i64(42).str("").i64(ts.UnixMilli()).i64(exp.UnixMilli()).b
	if got := OffsetValue(OffsetAndMetadata{Offset: 42, LeaderEpoch: -1, CommitTime: ts, ExpireTime: exp}); !bytes.Equal(got, want) {
		t.Errorf("OffsetCommitValue v1\n got %x\nwant %x", got, want)
	}
	// GroupMetadataKey v2: version, group.
	want = (&be{}).i16(2).str("grp").b
	if got := GroupKey("grp"); !bytes.Equal(got, want) {
		t.Errorf("GroupMetadataKey\n got %x\nwant %x", got, want)
	}
	// GroupMetadataValue v3.
	g := NewGroup("grp", DefaultConfig(), nil, ts)
	g.protocolType, g.generation, g.protocol = "consumer", 4, "range"
	m := &Member{ID: "m-1", InstanceID: "i-1", ClientID: "cli", ClientHost: "/127.0.0.1", ProtocolType: "consumer",
		RebalanceTimeout: 60 * time.Second, SessionTimeout: 10 * time.Second,
		Protocols: []Protocol{{Name: "range", Metadata: []byte("SUB")}}, Assignment: []byte("ASG")}
	g.add(m, nil)
	w := (&be{}).i16(3).str("consumer").i32(4)
	w.str("range").str("m-1") // protocol, leader (nullable strings, present)
	w.i64(ts.UnixMilli()).i32(1)
	w.str("m-1").str("i-1").str("cli").str("/127.0.0.1").i32(60000).i32(10000).byts("SUB").byts("ASG")
	if got := g.groupValue(ts, nil); !bytes.Equal(got, w.b) {
		t.Errorf("GroupMetadataValue v3\n got %x\nwant %x", got, w.b)
	}
}

func TestLoaderFoldsRecordsAndTombstones(t *testing.T) {
	ts := time.UnixMilli(1_700_000_000_000)
	g := NewGroup("a", DefaultConfig(), nil, ts)
	g.protocolType, g.generation, g.protocol = "consumer", 2, "range"
	g.add(&Member{ID: "m", ClientID: "c", SessionTimeout: 10 * time.Second, RebalanceTimeout: 20 * time.Second,
		Protocols: []Protocol{{Name: "range", Metadata: []byte("S")}}, Assignment: []byte("A")}, nil)
	l := NewLoader()
	apply := func(k, v []byte) {
		if err := l.Apply(k, v); err != nil {
			t.Fatal(err)
		}
	}
	apply(GroupKey("a"), g.groupValue(ts, nil))
	apply(OffsetKey("a", TopicPartition{"t", 0}), OffsetValue(OffsetAndMetadata{Offset: 1, CommitTime: ts}))
	apply(OffsetKey("a", TopicPartition{"t", 0}), OffsetValue(OffsetAndMetadata{Offset: 9, Metadata: "x", CommitTime: ts}))
	apply(OffsetKey("a", TopicPartition{"t", 1}), OffsetValue(OffsetAndMetadata{Offset: 3, CommitTime: ts}))
	apply(OffsetKey("a", TopicPartition{"t", 1}), nil)
	apply(OffsetKey("b", TopicPartition{"t", 0}), OffsetValue(OffsetAndMetadata{Offset: 5, CommitTime: ts}))
	apply(GroupKey("c"), g.groupValue(ts, nil))
	apply(GroupKey("c"), nil)
	if err := l.Apply([]byte{0}, nil); err == nil {
		t.Error("truncated key accepted")
	}
	if err := l.Apply((&be{}).i16(99).b, []byte("x")); err != nil {
		t.Errorf("unknown key version: %v", err)
	}
	if len(l.Groups) != 2 || l.Groups["c"] != nil {
		t.Fatalf("groups %v", l.Groups)
	}
	a := RestoreGroup("a", DefaultConfig(), nil, l.Groups["a"], ts)
	if a.State() != Stable || a.Generation() != 2 || a.Leader() != "m" || a.Protocol() != "range" {
		t.Fatalf("restored %v gen %d leader %q", a.State(), a.Generation(), a.Leader())
	}
	if o := a.Offsets(); len(o) != 1 || o[TopicPartition{"t", 0}].Offset != 9 || o[TopicPartition{"t", 0}].Metadata != "x" {
		t.Fatalf("offsets %v", o)
	}
	if c := a.Heartbeat(ts.Add(time.Second), "m", "", 2); c != 0 {
		t.Fatalf("restored member heartbeat %d", c)
	}
	b := RestoreGroup("b", DefaultConfig(), nil, l.Groups["b"], ts)
	if b.State() != Empty || b.ProtocolType() != "" || !b.Exists() {
		t.Fatalf("offsets-only group %v %q", b.State(), b.ProtocolType())
	}
}

func TestPartitionForMatchesJava(t *testing.T) {
	cases := []struct {
		s    string
		hash int32
	}{
		{"", 0}, {"a", 97}, {"hello", 99162322}, {"polygenelubricants", -1 << 31},
		{"é", 233}, {"😀", 1772899}, // surrogate pair \ud83d\ude00
	}
	for _, c := range cases {
		if h := javaStringHashCode(c.s); h != c.hash {
			t.Errorf("hashCode(%q) = %d, want %d", c.s, h, c.hash)
		}
	}
	if p := PartitionFor("hello", 50); p != 22 {
		t.Errorf("PartitionFor(hello) = %d, want 22", p)
	}
	if p := PartitionFor("polygenelubricants", 50); p != 0 {
		t.Errorf("MIN_VALUE hash must map to 0, got %d", p)
	}
}
