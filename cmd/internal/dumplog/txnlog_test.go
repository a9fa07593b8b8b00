package dumplog

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/record"
)

func txnKey(version int16, id string) []byte {
	k := kmsg.TxnMetadataKey{Version: version, TransactionalID: id}
	return k.AppendTo(nil)
}

func txnValue(version int16, state kmsg.TransactionState, topics ...kmsg.TxnMetadataValueTopic) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = version
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = 1334, 7, 60000
	v.State = state
	v.Topics = topics
	v.LastUpdateTimestamp, v.StartTimestamp = 1700000000123, 1700000000000
	if version >= 1 {
		// Tagged fields (KIP-890) are read past, not printed.
		v.PreviousProducerID, v.NextProducerID, v.ClientTransactionVersion = 1333, 1335, 2
	}
	return v.AppendTo(nil)
}

// Each __transaction_state record shape against the text Kafka's
// TransactionLog.formatRecordKeyAndValue gives it (the first is Kafka's own
// TransactionLogTest.testTransactionMetadataParsing expectation, with our
// ids and times).
func TestTransactionLogDecoderRecords(t *testing.T) {
	const key = "transaction_metadata::transactionalId=tx-1"
	two := []kmsg.TxnMetadataValueTopic{{Topic: "orders", Partitions: []int32{0, 2}}, {Topic: "pay", Partitions: []int32{1}}, {Topic: "orders", Partitions: []int32{2}}}
	for _, tc := range []struct {
		name             string
		key, value       []byte
		wantKey, wantVal string
	}{
		{"ongoing v0", txnKey(0, "tx-1"), txnValue(0, 1, kmsg.TxnMetadataValueTopic{Topic: "topic", Partitions: []int32{0}}),
			key, "producerId:1334,producerEpoch:7,state=Ongoing,partitions=[topic-0],txnLastUpdateTimestamp=1700000000123,txnTimeoutMs=60000"},
		{"prepare commit v1 flexible, duplicates dropped", txnKey(0, "tx-1"), txnValue(1, 2, two...),
			key, "producerId:1334,producerEpoch:7,state=PrepareCommit,partitions=[orders-0,orders-2,pay-1],txnLastUpdateTimestamp=1700000000123,txnTimeoutMs=60000"},
		{"empty ignores partitions", txnKey(0, "tx-1"), txnValue(0, 0, two...),
			key, "producerId:1334,producerEpoch:7,state=Empty,partitions=[],txnLastUpdateTimestamp=1700000000123,txnTimeoutMs=60000"},
		{"null partitions", txnKey(0, "tx-1"), txnValue(0, 4),
			key, "producerId:1334,producerEpoch:7,state=CompleteCommit,partitions=[],txnLastUpdateTimestamp=1700000000123,txnTimeoutMs=60000"},
		{"prepare epoch fence", txnKey(0, "tx-1"), txnValue(0, 7),
			key, "producerId:1334,producerEpoch:7,state=PrepareEpochFence,partitions=[],txnLastUpdateTimestamp=1700000000123,txnTimeoutMs=60000"},
		{"tombstone", txnKey(0, "tx-1"), nil, key, "<DELETE>"},
		{"unknown key version", txnKey(3, "tx-1"), txnValue(0, 1), "unknown::version=3", ""},
		{"unknown value version", txnKey(0, "tx-1"), append([]byte{0, 2}, txnValue(0, 1)[2:]...),
			key, "Unknown version 2 from the transaction log message value"},
		{"unknown state", txnKey(0, "tx-1"), txnValue(0, 9),
			key, "Unknown transaction state id 9 from the transaction status message"},
		{"truncated value", txnKey(0, "tx-1"), txnValue(0, 1)[:9],
			key, "Could not read record with version 0 from value's buffer due to: not enough data."},
		{"truncated key", txnKey(0, "tx-1")[:4], nil, "Error at offset 42, skipping. Could not read record with version 0 from key's buffer due to: not enough data.", ""},
		{"missing key", nil, txnValue(0, 1), "Failed to decode message at offset 42 using transaction log decoder (message had a missing key)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, v := formatTransactionLogRecord(tc.key, tc.value, 42)
			if k != tc.wantKey || v != tc.wantVal {
				t.Errorf("got\n key: %s\n payload: %s\nwant\n key: %s\n payload: %s", k, v, tc.wantKey, tc.wantVal)
			}
		})
	}
}

// A __transaction_state segment dumped whole with
// --transaction-log-decoder: record lines carry the decoded key and
// payload, a control batch in the same log still prints as a marker (not
// through the decoder), and a non-transaction control type prints as
// Kafka's "controlType: NAME(id)".
func TestTransactionLogDecoderSegment(t *testing.T) {
	dir := t.TempDir()
	ongoing := txnValue(0, 1, kmsg.TxnMetadataValueTopic{Topic: "t", Partitions: []int32{3}})
	batches := [][]byte{
		mustBatch(t, record.BatchOptions{BaseOffset: 0, BaseTimestamp: ts0}, []record.BatchRecord{
			{Key: txnKey(0, "a"), Value: ongoing},
			{Key: txnKey(0, "b"), Value: nil, TimestampDelta: 1},
		}),
		mustBatch(t, record.BatchOptions{BaseOffset: 2, BaseTimestamp: ts0 + 5, Control: true, Transactional: true, Producer: &record.Producer{ID: 9, Epoch: 1, BaseSequence: -1}},
			[]record.BatchRecord{record.EndTxnMarker(false, 4)}),
		mustBatch(t, record.BatchOptions{BaseOffset: 3, BaseTimestamp: ts0 + 6, Control: true}, []record.BatchRecord{
			{Key: []byte{0, 0, 0, 2}, Value: []byte{0, 0}},
		}),
	}
	var log []byte
	for _, b := range batches {
		log = append(log, b...)
	}
	path := filepath.Join(dir, "00000000000000000000.log")
	write(t, path, log)
	out, errOut, err := run(t, Options{Files: []string{path}, TransactionLogDecoder: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var records []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| ") {
			records = append(records, l)
		}
	}
	want := []string{
		fmt.Sprintf("| offset: 0 CreateTime: %d keySize: %d valueSize: %d sequence: -1 headerKeys: [] key: transaction_metadata::transactionalId=a payload: producerId:1334,producerEpoch:7,state=Ongoing,partitions=[t-3],txnLastUpdateTimestamp=1700000000123,txnTimeoutMs=60000", ts0, len(txnKey(0, "a")), len(ongoing)),
		fmt.Sprintf("| offset: 1 CreateTime: %d keySize: %d valueSize: -1 sequence: -1 headerKeys: [] key: transaction_metadata::transactionalId=b payload: <DELETE>", ts0+1, len(txnKey(0, "b"))),
		fmt.Sprintf("| offset: 2 CreateTime: %d keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 4", ts0+5),
		fmt.Sprintf("| offset: 3 CreateTime: %d keySize: 4 valueSize: 2 sequence: -1 headerKeys: [] controlType: LEADER_CHANGE(2)", ts0+6),
	}
	if strings.Join(records, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant:\n%s", strings.Join(records, "\n"), strings.Join(want, "\n"))
	}
	// With --offsets-decoder as well, Kafka's parser choice puts the
	// offsets decoder first: the key is read as a (truncated) type 0
	// offset commit key.
	out, _, _ = run(t, Options{Files: []string{path}, TransactionLogDecoder: true, OffsetsDecoder: true})
	if strings.Contains(out, "transaction_metadata::") || !strings.Contains(out, "key: Error at offset 0, skipping.") {
		t.Fatalf("both decoders: the offsets decoder should win:\n%s", out)
	}
}
