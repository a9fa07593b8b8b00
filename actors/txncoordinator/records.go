package txncoordinator

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// __transaction_state records, in Kafka's format: the key is
// TransactionLogKey v0 (int16 version, transactional_id), the value
// TransactionLogValue v0 (producer id, epoch, timeout, state, partitions by
// topic, last update and start timestamps). Kafka 3.9 writes value v0
// unless the transaction.version feature is finalised at 1 or more, which
// a ZooKeeper-mode cluster never does (TransactionLog.valueToBytes), so v0
// is what Gregor writes; v1 (flexible, KIP-915) is read as well.
const (
	keyVersion   = 0
	valueVersion = 0
)

// ErrBadRecord wraps every decode failure of a __transaction_state record.
var ErrBadRecord = errors.New("txncoordinator: bad __transaction_state record")

// Key encodes the TransactionLogKey of a transactional id.
func Key(transactionalID string) []byte {
	k := kmsg.TxnMetadataKey{Version: keyVersion, TransactionalID: transactionalID}
	return k.AppendTo(nil)
}

// Value encodes the TransactionLogValue of a transition. An Empty state is
// written with null partitions, as Kafka does.
func Value(t Transit) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = valueVersion
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = t.ProducerID, t.ProducerEpoch, t.TimeoutMs
	v.State = kmsg.TransactionState(t.State)
	v.LastUpdateTimestamp, v.StartTimestamp = t.UpdateTimestamp, t.StartTimestamp
	if t.State != Empty {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
		for _, tp := range t.Partitions {
			if n := len(v.Topics); n > 0 && v.Topics[n-1].Topic == tp.Topic {
				v.Topics[n-1].Partitions = append(v.Topics[n-1].Partitions, tp.Partition)
				continue
			}
			v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
		}
	}
	return v.AppendTo(nil)
}

// DecodeKey decodes a TransactionLogKey; ok is false for a key version
// Kafka does not define (skipped, as Kafka's UnknownKey).
func DecodeKey(b []byte) (transactionalID string, ok bool, err error) {
	if len(b) < 2 {
		return "", false, fmt.Errorf("%w: key of %d bytes", ErrBadRecord, len(b))
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != keyVersion {
		return "", false, nil
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(b); err != nil {
		return "", false, fmt.Errorf("%w: key: %v", ErrBadRecord, err)
	}
	return k.TransactionalID, true, nil
}

// DecodeValue decodes a TransactionLogValue v0 or v1 into the metadata it
// describes (no pending transition).
func DecodeValue(transactionalID string, b []byte) (*Metadata, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: value of %d bytes", ErrBadRecord, len(b))
	}
	if v := int16(binary.BigEndian.Uint16(b)); v < 0 || v > 1 {
		return nil, fmt.Errorf("%w: unknown value version %d", ErrBadRecord, v)
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(b); err != nil {
		return nil, fmt.Errorf("%w: value: %v", ErrBadRecord, err)
	}
	// Dead and PrepareEpochFence are in-memory states Kafka never writes
	// (an expired id is a tombstone): a record with them, like an unknown
	// state, is not one a coordinator could resume from.
	if v.State < 0 || v.State > kmsg.TransactionState(CompleteAbort) {
		return nil, fmt.Errorf("%w: transaction state %d is never written", ErrBadRecord, v.State)
	}
	m := &Metadata{TransactionalID: transactionalID, ProducerID: v.ProducerID, LastProducerID: noProducerID,
		ProducerEpoch: v.ProducerEpoch, LastProducerEpoch: noProducerEpoch, TimeoutMs: v.TimeoutMillis,
		State: State(v.State), Partitions: map[TopicPartition]struct{}{},
		StartTimestamp: v.StartTimestamp, UpdateTimestamp: v.LastUpdateTimestamp}
	if m.State != Empty {
		for _, t := range v.Topics {
			for _, p := range t.Partitions {
				m.Partitions[TopicPartition{Topic: t.Topic, Partition: p}] = struct{}{}
			}
		}
	}
	return m, nil
}

// Loader folds a partition's records, in offset order, into the
// transactional ids they describe: the last record of an id wins, a
// tombstone removes it (what compaction keeps).
type Loader struct {
	Txns map[string]*Metadata
}

// NewLoader returns an empty Loader.
func NewLoader() *Loader { return &Loader{Txns: map[string]*Metadata{}} }

// Apply folds one record (value nil: tombstone). Undecodable records are
// returned as errors wrapping ErrBadRecord (callers log and skip them).
func (l *Loader) Apply(key, value []byte) error {
	id, ok, err := DecodeKey(key)
	if err != nil || !ok {
		return err
	}
	if value == nil {
		delete(l.Txns, id)
		return nil
	}
	m, err := DecodeValue(id, value)
	if err != nil {
		return err
	}
	l.Txns[id] = m
	return nil
}
