package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"gregor/storage/record"
)

// seg describes one batch to write: base offset, leader epoch, values.
type seg struct {
	base   int64
	epoch  int32
	values []string
}

// writeLog writes a partition directory with one segment per element of
// files (each a list of batches), named by its first batch's base offset,
// in the given codec.
func writeLog(t *testing.T, codec record.Codec, files ...[]seg) string {
	t.Helper()
	dir := t.TempDir()
	for _, batches := range files {
		var data []byte
		for _, b := range batches {
			recs := make([]record.BatchRecord, len(b.values))
			for i, v := range b.values {
				recs[i] = record.BatchRecord{Value: []byte(v)}
			}
			var err error
			data, err = record.AppendBatch(data, record.BatchOptions{BaseOffset: b.base, PartitionLeaderEpoch: b.epoch,
				Codec: codec, Producer: &record.Producer{ID: 7, BaseSequence: int32(b.base)}}, recs)
			if err != nil {
				t.Fatal(err)
			}
		}
		name := filepath.Join(dir, fmt.Sprintf("%020d.log", batches[0].base))
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func read(t *testing.T, dir string) *ReplicaLog {
	t.Helper()
	l, err := ReadReplicaLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestReadReplicaLogAcrossSegmentsAndCodecs(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecSnappy, record.CodecZstd} {
		dir := writeLog(t, codec,
			[]seg{{0, 0, []string{"a", "b"}}, {2, 0, []string{"c"}}},
			[]seg{{3, 1, []string{"d", "e", "f"}}})
		l := read(t, dir)
		if len(l.Problems) != 0 {
			t.Fatalf("%v: problems %v", codec, l.Problems)
		}
		want := []string{"a", "b", "c", "d", "e", "f"}
		if len(l.Entries) != len(want) || l.LogEndOffset() != 6 {
			t.Fatalf("%v: %d entries, LEO %d", codec, len(l.Entries), l.LogEndOffset())
		}
		for i, e := range l.Entries {
			if e.Offset != int64(i) || e.Value != want[i] || e.ProducerID != 7 {
				t.Errorf("%v: entry %d = %+v", codec, i, e)
			}
		}
		if l.Entries[3].LeaderEpoch != 1 || l.Entries[2].LeaderEpoch != 0 {
			t.Errorf("%v: leader epochs %d %d", codec, l.Entries[2].LeaderEpoch, l.Entries[3].LeaderEpoch)
		}
	}
}

func TestReadReplicaLogTornTailAndCorruption(t *testing.T) {
	dir := writeLog(t, record.CodecNone, []seg{{0, 0, []string{"a"}}, {1, 0, []string{"b"}}})
	name := filepath.Join(dir, fmt.Sprintf("%020d.log", 0))
	data, _ := os.ReadFile(name)
	// A torn final batch (SIGKILL mid-write) ends the log quietly.
	if err := os.WriteFile(name, data[:len(data)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	if l := read(t, dir); len(l.Entries) != 1 || len(l.Problems) != 0 {
		t.Fatalf("torn tail: %d entries, problems %v", len(l.Entries), l.Problems)
	}
	// A flipped byte in the first batch's records is a CRC failure.
	data[record.HeaderSize+2] ^= 0xff
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if l := read(t, dir); len(l.Problems) != 1 {
		t.Fatalf("corrupt batch: problems %v", l.Problems)
	}
}

func TestCheckPartitionFindsEachKindOfDamage(t *testing.T) {
	good := writeLog(t, record.CodecNone, []seg{{0, 0, []string{"v0", "v1", "v2"}}, {3, 1, []string{"v3"}}})
	acked := []Acked{{0, 0, "v0"}, {0, 1, "v1"}, {0, 3, "v3"}}
	base := func() PartitionInput {
		return PartitionInput{Topic: "t", HighWatermark: 4, Leader: 1, Acked: acked,
			Replicas: map[int32]*ReplicaLog{1: read(t, good), 2: read(t, good), 3: read(t, good)}}
	}
	if r := CheckPartition(base()); !r.OK() {
		t.Fatalf("identical replicas: %+v", r)
	}

	// A replica beyond the HW may differ (not yet replicated / truncated later).
	longer := writeLog(t, record.CodecNone, []seg{{0, 0, []string{"v0", "v1", "v2"}}, {3, 1, []string{"v3"}}, {4, 1, []string{"extra"}}})
	in := base()
	in.Replicas[2] = read(t, longer)
	if r := CheckPartition(in); !r.OK() {
		t.Fatalf("tail above the HW counted: %+v", r)
	}

	// Acked at an offset that holds something else, and above the HW.
	in = base()
	in.Acked = append(in.Acked, Acked{0, 2, "other"}, Acked{0, 9, "v9"})
	if r := CheckPartition(in); r.Lost != 2 || r.Duplicated+r.Divergent+r.Gaps != 0 {
		t.Fatalf("lost: %+v", r)
	}

	// A follower with a different record at offset 2 and missing offset 3.
	diverged := writeLog(t, record.CodecNone, []seg{{0, 0, []string{"v0", "v1", "x2"}}})
	in = base()
	in.Replicas[3] = read(t, diverged)
	if r := CheckPartition(in); r.Divergent != 2 || r.Lost != 0 {
		t.Fatalf("divergent: %+v", r)
	}

	// The leader holds a value twice and skips an offset.
	dup := writeLog(t, record.CodecNone, []seg{{0, 0, []string{"v0", "v1"}}, {3, 1, []string{"v1"}}})
	in = base()
	in.Acked = nil
	in.Replicas = map[int32]*ReplicaLog{1: read(t, dup)}
	if r := CheckPartition(in); r.Duplicated != 1 || r.Gaps != 1 {
		t.Fatalf("duplicate and gap: %+v", r)
	}
}
