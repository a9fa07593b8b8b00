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
// the broker stops (controlled.shutdown.enable, default true; false stops
// without a ControlledShutdown request, as Kafka), at most
// controlled.shutdown.max.retries attempts controlled.shutdown.retry.backoff.ms
// apart, each bounded by controller.socket.timeout.ms.
func (b *Broker) controlledShutdown() {
	if !b.cfg.ControlledShutdown.Enable {
		b.log.Info("controlled shutdown disabled (controlled.shutdown.enable=false): stopping without moving leadership")
		return
	}
	o := controller.ShutdownOptionsFromBroker(b.cfg)
	attempts := max(o.MaxRetries, 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(attempts)*(o.Backoff+o.Timeout)+time.Second)
	defer cancel()
	began := time.Now()
	if err := b.ctrl.RequestControlledShutdown(ctx, o); err != nil {
		b.log.Warn("Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed", zap.Error(err))
		return
	}
	b.log.Info("controlled shutdown complete", zap.Duration("took", time.Since(began)))
}
