package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"go.uber.org/zap"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/storage/checkpoint"
)

// resolveBrokerID settles cfg.BrokerID before anything uses it, as
// Kafka's KafkaServer.getOrGenerateBrokerId: a configured id (>= 0) must
// match the one the log dirs' meta.properties store; broker.id -1 takes
// the stored one, else (broker.id.generation.enable, checked at load)
// generates reserved.broker.max.id + the new version of /brokers/seqid.
// EnsureMetaProperties then writes the id into every log dir, so a
// restart keeps it. In the embedded single-node mode /brokers/seqid is a
// node of the embedded store, so the first generated id is 1001 there too.
func (b *Broker) resolveBrokerID(store metastore.Store) error {
	stored, storedIn := int32(-1), ""
	offline := b.logs.OfflineDirs()
	for _, d := range b.cfg.LogDirs {
		if _, bad := offline[d]; bad {
			continue
		}
		mp, err := checkpoint.ReadMetaProperties(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		path := filepath.Join(d, checkpoint.MetaPropertiesFile)
		expected := stored
		if b.cfg.BrokerID >= 0 {
			expected = b.cfg.BrokerID
		}
		if expected >= 0 && mp.BrokerID != expected {
			return fmt.Errorf("Stored node id %d doesn't match previous node id %d in %s. If you moved your data, make sure your configured node id matches. If you intend to create a new node, you should remove all data in your data directories.",
				mp.BrokerID, expected, path)
		}
		stored, storedIn = mp.BrokerID, path
	}
	switch {
	case b.cfg.BrokerID >= 0:
		return nil
	case stored >= 0:
		b.cfg.BrokerID = stored
		b.log.Info("broker.id from meta.properties", zap.Int32("broker.id", stored), zap.String("file", storedIn))
		return nil
	}
	id, err := generateBrokerID(store, b.cfg.IDGeneration.ReservedMaxID)
	if err != nil {
		return fmt.Errorf("Failed to generate broker.id: %w", err)
	}
	b.cfg.BrokerID = id
	b.log.Info("broker.id generated", zap.Int32("broker.id", id), zap.String("from", zkmeta.BrokerSeqIDPath),
		zap.Int32("reserved.broker.max.id", b.cfg.IDGeneration.ReservedMaxID))
	return nil
}

// generateBrokerId is KafkaZkClient.generateBrokerSequenceId plus the
// reserved range: an unconditional write of /brokers/seqid (created when
// missing) returns the node's new version, unique per write.
func generateBrokerID(store metastore.Store, reservedMax int32) (int32, error) {
	v, err := store.Set(zkmeta.BrokerSeqIDPath, nil, metastore.AnyVersion)
	if errors.Is(err, metastore.ErrNoNode) {
		if err := metastore.EnsurePath(store, zkmeta.BrokerSeqIDPath); err != nil {
			return 0, err
		}
		v, err = store.Set(zkmeta.BrokerSeqIDPath, nil, metastore.AnyVersion)
	}
	if err != nil {
		return 0, err
	}
	if int64(v)+int64(reservedMax) > 1<<31-1 {
		return 0, fmt.Errorf("%s version %d + reserved.broker.max.id %d overflows an int", zkmeta.BrokerSeqIDPath, v, reservedMax)
	}
	return v + reservedMax, nil
}
