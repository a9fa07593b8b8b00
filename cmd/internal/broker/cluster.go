package broker

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"gregor/replication/controller"
	"gregor/replication/metastore"
	"gregor/replication/zkstore"
)

// openStore opens the metadata store: ZooKeeper when zookeeper.connect is
// set (cluster mode), else the embedded store under the first online log dir.
func (b *Broker) openStore(onlineDir string) (metastore.Store, error) {
	if b.injected != nil {
		return b.injected, nil
	}
	if b.cfg.ZookeeperConnect == "" {
		s, err := metastore.OpenEmbeddedDir(onlineDir)
		if err != nil {
			return nil, fmt.Errorf("embedded metadata store in %s: %w", onlineDir, err)
		}
		if from := s.MigratedFrom(); from != "" {
			b.log.Info("converted the embedded metadata snapshot of an older version",
				zap.String("from", from), zap.String("to", s.File()), zap.String("backup", from+metastore.MigratedSuffix))
		}
		return s, nil
	}
	s, err := zkstore.Open(b.cfg.ZookeeperConnect, zkstore.ConfigFromBroker(b.cfg, b.log.Named("zookeeper")))
	if err != nil {
		return nil, fmt.Errorf("zookeeper.connect=%s: %w", b.cfg.ZookeeperConnect, err)
	}
	return s, nil
}

// controlledShutdown asks the controller to move leadership away before
// the broker stops (controlled.shutdown.enable, default true), bounded by
// controlled.shutdown.max.retries × controlled.shutdown.retry.backoff.ms.
func (b *Broker) controlledShutdown() {
	if b.cfg.Raw["controlled.shutdown.enable"] == "false" {
		return
	}
	o := controller.ShutdownOptionsFromConfig(b.cfg.Raw)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(o.MaxRetries+1)*(o.Backoff+o.Timeout))
	defer cancel()
	began := time.Now()
	if err := b.ctrl.RequestControlledShutdown(ctx, o); err != nil {
		b.log.Warn("controlled shutdown incomplete; stopping anyway", zap.Error(err))
		return
	}
	b.log.Info("controlled shutdown complete", zap.Duration("took", time.Since(began)))
}
