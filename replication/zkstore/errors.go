package zkstore

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"gregor/replication/metastore"
)

// mapErr turns go-zookeeper's errors into the metastore sentinels, keeping
// ZooKeeper's text for the ones without a counterpart.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode):
		return metastore.ErrNoNode
	case errors.Is(err, zk.ErrNodeExists):
		return metastore.ErrNodeExists
	case errors.Is(err, zk.ErrBadVersion):
		return metastore.ErrBadVersion
	case errors.Is(err, zk.ErrNotEmpty):
		return metastore.ErrNotEmpty
	case errors.Is(err, zk.ErrNoChildrenForEphemerals):
		return metastore.ErrNoChildrenForEphemerals
	case errors.Is(err, zk.ErrInvalidPath), errors.Is(err, zk.ErrBadArguments):
		return fmt.Errorf("%w (%v)", metastore.ErrInvalidPath, err)
	case errors.Is(err, zk.ErrClosing):
		return metastore.ErrClosed
	case errors.Is(err, zk.ErrSessionExpired):
		return fmt.Errorf("%w (%v)", metastore.ErrSessionExpired, err)
	case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrSessionMoved):
		return fmt.Errorf("%w (%v)", metastore.ErrConnectionLoss, err)
	}
	return fmt.Errorf("zkstore: %w", err)
}

// errRuntimeInconsistency is ZooKeeper's code -2, which go-zookeeper does
// not name: in a failed multi every op after the failing one reports it.
const errRuntimeInconsistency = "unknown error: -2"

func isRuntimeInconsistency(err error) bool {
	return err != nil && err.Error() == errRuntimeInconsistency
}
