package dumplog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
)

// TestDumpTxnIndexAndProducerSnapshot: the two transaction files print as
// Kafka's DumpLogSegments prints them, written by the storage and
// partition code that writes them for real.
func TestDumpTxnIndexAndProducerSnapshot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l, err := storage.OpenLog(dir, storage.DefaultLogConfig(), storage.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	data, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: 1000, Transactional: true, PartitionLeaderEpoch: -1,
		Producer: &record.Producer{ID: 42, Epoch: 3, BaseSequence: 0}}, []record.BatchRecord{{Value: []byte("a")}, {Value: []byte("b")}})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := record.ParseHeader(data)
	if _, err := l.Append(data, storage.AppendOptions{LeaderEpoch: 0, LogAppendTime: -1}); err != nil {
		t.Fatal(err)
	}
	if err := l.AppendAbortedTxn(storage.AbortedTxn{ProducerID: 42, FirstOffset: 0, LastOffset: 1, LastStableOffset: 2}); err != nil {
		t.Fatal(err)
	}
	p := partition.NewProducers()
	p.Update(&h, 1001)
	if err := l.WriteProducerSnapshot(2, partition.EncodeProducerSnapshot(p)); err != nil {
		t.Fatal(err)
	}
	txn := filepath.Join(dir, "00000000000000000000.txnindex")
	snap := filepath.Join(dir, "00000000000000000002.snapshot")
	out, errOut, err := run(t, Options{Files: []string{txn, snap}})
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	want := "Dumping " + txn + "\n" +
		"version: 0 producerId: 42 firstOffset: 0 lastOffset: 1 lastStableOffset: 2\n" +
		"Dumping " + snap + "\n" +
		"producerId: 42 producerEpoch: 3 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong[0] lastTimestamp: 1001 " +
		"firstSequence: 0 lastSequence: 1 lastOffset: 1 offsetDelta: 1 timestamp: 1001\n"
	if out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}

	// Damage is reported, not printed as data.
	b, _ := os.ReadFile(snap)
	b[len(b)-1] ^= 1
	if err := os.WriteFile(snap, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err = run(t, Options{Files: []string{snap}})
	if err == nil || !strings.Contains(errOut, "CRC") {
		t.Fatalf("corrupt snapshot: err %v, stderr %q", err, errOut)
	}
}
