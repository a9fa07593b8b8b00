package storage

import (
	"errors"
	"fmt"
	"io/fs"

	"gregor/storage/checkpoint"
)

// ErrInconsistentBrokerID: a log dir's meta.properties names another broker
// or cluster (Kafka's InconsistentBrokerIdException /
// InconsistentClusterIdException).
var ErrInconsistentBrokerID = errors.New("log dir belongs to another broker or cluster")

// EnsureMetaProperties checks every online log dir's meta.properties
// (version=0, broker.id, cluster.id) against the broker's ids, writing the
// file where it is missing (and filling in a missing cluster.id). A dir
// naming another broker or cluster gives an error wrapping
// ErrInconsistentBrokerID; the broker should refuse to start, as Kafka
// does. An empty clusterID accepts any stored cluster id.
func (m *LogManager) EnsureMetaProperties(brokerID int32, clusterID string) error {
	m.mu.Lock()
	dirs := append([]string(nil), m.online...)
	m.mu.Unlock()
	var errs []error
	for _, dir := range dirs {
		mp, err := checkpoint.ReadMetaProperties(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = checkpoint.WriteMetaProperties(dir, checkpoint.MetaProperties{Version: 0, BrokerID: brokerID, ClusterID: clusterID})
		case err != nil:
		case mp.BrokerID != brokerID || (clusterID != "" && mp.ClusterID != "" && mp.ClusterID != clusterID):
			err = fmt.Errorf("%w: %s has broker.id=%d cluster.id=%q, this broker is %d in %q",
				ErrInconsistentBrokerID, dir, mp.BrokerID, mp.ClusterID, brokerID, clusterID)
		case mp.ClusterID == "" && clusterID != "":
			mp.ClusterID = clusterID
			err = checkpoint.WriteMetaProperties(dir, mp)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
