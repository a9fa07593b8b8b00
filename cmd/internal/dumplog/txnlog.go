package dumplog

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Versions of the __transaction_state schemas Kafka reads
// (TransactionLogKey.json: 0; TransactionLogValue.json: 0–1, 1 flexible).
const (
	txnLogKeyVersion      = 0
	txnLogValueMaxVersion = 1
)

// formatTransactionLogRecord is the --transaction-log-decoder
// messageParser: it decodes a __transaction_state record as Kafka's
// TransactionLog.formatRecordKeyAndValue (DumpLogSegments'
// TransactionLogMessageParser) prints it:
//
//	key: transaction_metadata::transactionalId=tx1 payload: producerId:7,producerEpoch:0,state=Ongoing,partitions=[t-0,t-1],txnLastUpdateTimestamp=1700000000000,txnTimeoutMs=60000
//
// A tombstone prints "payload: <DELETE>"; a key version other than 0
// prints "unknown::version=N" and no payload. The state is Kafka's
// TransactionState name; an Empty transaction lists no partitions whatever
// the record holds, as Kafka ignores them. Partitions print in record
// order, duplicates dropped (Kafka collects them into a set, whose order
// is its hash order). Where Kafka's tool stops with an exception (a
// missing key, a value version or state id it does not know, bytes that do
// not parse) the line carries the exception's message instead and the dump
// goes on.
func formatTransactionLogRecord(key, value []byte, offset int64) (string, string) {
	if key == nil {
		return fmt.Sprintf("Failed to decode message at offset %d using transaction log decoder (message had a missing key)", offset), ""
	}
	skip := func(format string, args ...any) (string, string) {
		return fmt.Sprintf("Error at offset %d, skipping. ", offset) + fmt.Sprintf(format, args...), ""
	}
	if len(key) < 2 {
		return skip("Could not read version from key's buffer.")
	}
	if v := int16(binary.BigEndian.Uint16(key)); v != txnLogKeyVersion {
		return "unknown::version=" + strconv.Itoa(int(v)), ""
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return skip("Could not read record with version %d from key's buffer due to: not enough data.", txnLogKeyVersion)
	}
	keyText := "transaction_metadata::transactionalId=" + k.TransactionalID
	if value == nil {
		return keyText, "<DELETE>"
	}
	if len(value) < 2 {
		return keyText, "Could not read version from value's buffer."
	}
	version := int16(binary.BigEndian.Uint16(value))
	if version < 0 || version > txnLogValueMaxVersion {
		return keyText, fmt.Sprintf("Unknown version %d from the transaction log message value", version)
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(value); err != nil {
		return keyText, fmt.Sprintf("Could not read record with version %d from value's buffer due to: not enough data.", version)
	}
	state, ok := txnStateName(v.State)
	if !ok {
		return keyText, fmt.Sprintf("Unknown transaction state id %d from the transaction status message", int8(v.State))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "producerId:%d,producerEpoch:%d,state=%s,partitions=[", v.ProducerID, v.ProducerEpoch, state)
	if state != "Empty" {
		writeTxnPartitions(&b, v.Topics)
	}
	fmt.Fprintf(&b, "],txnLastUpdateTimestamp=%d,txnTimeoutMs=%d", v.LastUpdateTimestamp, v.TimeoutMillis)
	return keyText, b.String()
}

// txnStateName is Kafka's TransactionState name for a TransactionStatus
// id (TransactionState.fromId: 0 Empty … 7 PrepareEpochFence); ok is false
// for an id Kafka rejects.
func txnStateName(s kmsg.TransactionState) (string, bool) {
	if s < 0 || s > 7 {
		return "", false
	}
	return s.String(), true
}

// writeTxnPartitions writes the transaction's partitions as Kafka's
// TopicPartition.toString ("topic-partition"), comma separated, each once.
func writeTxnPartitions(b *strings.Builder, topics []kmsg.TxnMetadataValueTopic) {
	seen := map[string]struct{}{}
	for _, t := range topics {
		for _, p := range t.Partitions {
			tp := t.Topic + "-" + strconv.Itoa(int(p))
			if _, dup := seen[tp]; dup {
				continue
			}
			if len(seen) > 0 {
				b.WriteByte(',')
			}
			seen[tp] = struct{}{}
			b.WriteString(tp)
		}
	}
}
