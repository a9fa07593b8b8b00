package chaos

import (
	"os"
	"path/filepath"
	"testing"

	"gregor/storage/record"
)

// txnBatch is one batch of a transactional log: data of producer pid, or
// its marker (control, commit).
type txnBatch struct {
	base            int64
	pid             int64
	txn             bool
	control, commit bool
	values          []string
}

func writeTxnLog(t *testing.T, batches ...txnBatch) string {
	t.Helper()
	dir := t.TempDir()
	var data []byte
	for _, b := range batches {
		var recs []record.BatchRecord
		if b.control {
			recs = []record.BatchRecord{record.EndTxnMarker(b.commit, 3)}
		}
		for _, v := range b.values {
			recs = append(recs, record.BatchRecord{Value: []byte(v)})
		}
		var err error
		data, err = record.AppendBatch(data, record.BatchOptions{BaseOffset: b.base, Transactional: b.txn || b.control,
			Control: b.control, Producer: &record.Producer{ID: b.pid, BaseSequence: int32(b.base)}}, recs)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The reader keeps markers (as control entries), and ReadCommitted replays
// the log as a read_committed consumer: plain records at once, a
// producer's transaction at its COMMIT marker, an aborted one never, and
// one without a marker below the end reported open. Producers 1 and 2
// interleave, so a marker must complete only its own producer's records.
func TestReadCommittedReplaysMarkers(t *testing.T) {
	dir := writeTxnLog(t,
		txnBatch{base: 0, pid: 9, values: []string{"plain"}},
		txnBatch{base: 1, pid: 1, txn: true, values: []string{"a1", "a2"}},
		txnBatch{base: 3, pid: 2, txn: true, values: []string{"b1"}},
		txnBatch{base: 4, pid: 2, control: true, commit: false},
		txnBatch{base: 5, pid: 1, txn: true, values: []string{"a3"}},
		txnBatch{base: 6, pid: 1, control: true, commit: true},
		txnBatch{base: 7, pid: 2, txn: true, values: []string{"b2"}},
		txnBatch{base: 8, pid: 2, control: true, commit: true},
	)
	l := read(t, dir)
	if len(l.Problems) != 0 || l.LogEndOffset() != 9 {
		t.Fatalf("problems %v, log end %d", l.Problems, l.LogEndOffset())
	}
	if e := l.Entries[4]; !e.Control || e.Commit || e.ProducerID != 2 || e.Offset != 4 {
		t.Fatalf("entry 4 = %+v, want producer 2's ABORT marker", e)
	}
	values := func(es []Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Value)
		}
		return out
	}
	v := ReadCommitted(l, 9)
	if got := values(v.Committed); !equal(got, []string{"plain", "a1", "a2", "a3", "b2"}) {
		t.Fatalf("committed %v", got)
	}
	if v.Aborted != 1 || v.Commits != 2 || v.Aborts != 1 || len(v.Open) != 0 {
		t.Fatalf("view %+v", v)
	}
	// Below offset 8 producer 2's second transaction has no marker yet.
	v = ReadCommitted(l, 8)
	if got := values(v.Open); !equal(got, []string{"b2"}) || len(v.Committed) != 4 {
		t.Fatalf("open %v, committed %v", got, values(v.Committed))
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Each way of breaking exactly-once is counted: an input never committed
// (lost), one committed twice (duplicated), a committed value that was no
// input (unexpected), an open transaction, and a consumer whose reads
// differ from the log.
func TestCheckExactlyOnce(t *testing.T) {
	in := func(vs ...string) []Entry {
		var out []Entry
		for i, v := range vs {
			out = append(out, Entry{Offset: int64(i), Value: v})
		}
		return out
	}
	good := EOSInput{
		Inputs:  map[int32][]Entry{0: in("x", "y"), 1: in("z")},
		Outputs: map[int32]CommittedView{0: {Committed: in("y", "x"), Aborted: 2, Commits: 2, Aborts: 1}, 1: {Committed: in("z"), Commits: 1}},
		Fetched: map[int32][]string{0: {"x", "y"}, 1: {"z"}},
	}
	if r := CheckExactlyOnce(good); !r.OK() || r.Inputs != 3 || r.Committed != 3 || r.Aborted != 2 || r.Commits != 3 || r.Aborts != 1 {
		t.Fatalf("good run: %+v", r)
	}
	bad := EOSInput{
		Inputs:  map[int32][]Entry{0: in("x", "y", "w"), 1: in("z")},
		Outputs: map[int32]CommittedView{0: {Committed: in("y", "x", "y"), Open: in("w")}, 1: {Committed: in("z", "x")}},
		Fetched: map[int32][]string{0: {"x", "y", "y"}, 1: {"z"}},
	}
	r := CheckExactlyOnce(bad)
	if r.OK() || r.Lost != 1 || r.Duplicated != 1 || r.Unexpected != 1 || r.Open != 1 || r.FetchMismatch != 1 {
		t.Fatalf("bad run: %+v", r)
	}
}
