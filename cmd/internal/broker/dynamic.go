package broker

import (
	"crypto/tls"
	"fmt"

	"go.uber.org/zap"

	"gregor/config"
	"gregor/config/dynamic"
	"gregor/storage"
)

// startDynamicConfig loads /config/brokers/<default> and /config/brokers/<id>
// over server.properties and starts the watcher that re-reads them on a
// /config/changes notification (the controller's
// Options.OnBrokerConfigChange). It returns the effective config the
// components start from. Stopped by Close.
func (b *Broker) startDynamicConfig() (*config.Broker, error) {
	b.dyn = dynamic.New(b.cfg, b.log.Named("dynamic-config"))
	if err := b.dyn.Load(b.store); err != nil {
		return nil, err
	}
	b.dynWatcher = dynamic.Watch(b.store, b.dyn, b.log.Named("dynamic-config"))
	b.closers = append(b.closers, func() error { b.dynWatcher.Close(); return nil })
	return b.dyn.Current(), nil
}

// registerDynamic registers the broker's reconfigurable components
// (Kafka's addReconfigurable calls). Other components register with one
// b.dyn.Register / RegisterFunc call.
func (b *Broker) registerDynamic() {
	// Replication throttle rates (Kafka's BrokerConfigHandler →
	// ReplicationQuotaManager.updateQuota).
	b.dyn.RegisterFunc("replication-quotas", config.ReplicationQuotaKeys, func(next *config.Broker) {
		q := next.Quotas
		b.quotas.Leader.SetRate(q.LeaderReplicationThrottledRate)
		b.quotas.Follower.SetRate(q.FollowerReplicationThrottledRate)
		b.quotas.AlterLogDirs.SetRate(q.ReplicaAlterLogDirsIOMaxBytesPerSecond)
	})
	// Topic defaults: partitions of topics without their own override
	// take the new default (controller.DefaultsChanged).
	b.dyn.RegisterFunc("topic-defaults", config.TopicDefaultKeys, func(next *config.Broker) {
		b.ctrl.SetTopicDefaults(next)
		b.ctrl.DefaultsChanged()
	})
	// num.replica.fetchers (Kafka's BrokerDynamicThreadPool →
	// ReplicaManager.resizeFetcherThreadPool): partitions re-hashed to
	// the new number of fetchers per leader. Validated as Kafka's
	// DynamicThreadPool: at least 1, half to double the current count.
	b.dyn.Register(dynamic.Component{Name: "replica-fetchers", Keys: []string{"num.replica.fetchers"},
		Validate: func(cur, next *config.Broker) error {
			return config.ValidateThreadCount("num.replica.fetchers", cur.NumReplicaFetchers, next.NumReplicaFetchers)
		},
		Apply: func(next *config.Broker) {
			if b.fetchers != nil {
				b.fetchers.Resize(next.NumReplicaFetchers)
			}
		}})
	// The log cleaner (Kafka's LogCleaner.reconfigure): the I/O rate
	// applies at once, the buffers and thread count from the next pass,
	// after the new backoff. log.cleaner.threads is validated as Kafka's
	// LogCleaner.validateReconfiguration.
	b.dyn.Register(dynamic.Component{Name: "log-cleaner", Keys: config.CleanerKeys,
		Validate: func(cur, next *config.Broker) error {
			// Kafka checks the count on any cleaner key's change, so with
			// log.cleaner.threads=0 no cleaner key changes at run time.
			return config.ValidateCleanerThreads(cur.CleanerIO.Threads, next.CleanerIO.Threads)
		},
		Apply: func(next *config.Broker) { b.maint.SetCleaner(next.LogCleanerBackoff, cleanerConfig(next)) }})
	// Connection quotas: new connections only; open ones stay.
	b.dyn.RegisterFunc("connection-quotas", config.ConnectionLimitKeys, func(next *config.Broker) {
		b.server.SetConnectionLimits(next.ConnectionLimits)
	})
	b.registerKeystores()
}

// registerKeystores makes every TLS listener's keystore
// (listener.name.<l>.ssl.keystore.*, ssl.key.password: per-broker dynamic
// configs, the passwords stored encrypted with password.encoder.secret)
// reloadable, as Kafka's SslFactory reconfiguration: the new keystore is
// loaded and checked before anything changes, then new connections
// handshake with it; open ones keep theirs. A keystore key of a listener
// without TLS is refused (nothing would read it).
func (b *Broker) registerKeystores() {
	for _, l := range b.cfg.Listeners {
		name := l.Name
		keys := config.KeystoreKeys(name)
		if !b.cfg.ListenerProtocol(name).UsesTLS() {
			b.dyn.Register(dynamic.Component{Name: "listener " + name, Keys: keys,
				Validate: func(_, next *config.Broker) error {
					for _, k := range keys {
						if _, ok := next.Raw[k]; ok {
							return fmt.Errorf("listener %s is %s: it has no keystore (%s)", name, next.ListenerProtocol(name), k)
						}
					}
					return nil
				}, Apply: func(*config.Broker) {}})
			continue
		}
		b.dyn.Register(dynamic.Component{Name: "listener " + name + " keystore", Keys: keys,
			Validate: func(_, next *config.Broker) error {
				_, err := listenerTLS(next, name)
				return err
			},
			Apply: func(next *config.Broker) {
				tc, err := listenerTLS(next, name)
				if err == nil {
					err = b.server.SetListenerTLS(name, tc)
				}
				if err != nil { // validated just before; a keystore file changed since
					b.log.Error("listener keystore not reloaded", zap.String("listener", name), zap.Error(err))
					return
				}
				b.log.Info("listener keystore reloaded: new connections use it", zap.String("listener", name))
			}})
	}
}

// listenerTLS loads a listener's TLS server configuration from cfg.
func listenerTLS(cfg *config.Broker, name string) (*tls.Config, error) {
	st, err := cfg.ListenerSSL(name)
	if err != nil {
		return nil, err
	}
	tc, err := st.Server()
	if err != nil {
		return nil, fmt.Errorf("listener %s keystore: %w", name, err)
	}
	return tc, nil
}

// applyStartKeystores installs, before the listeners open, the keystores
// that dynamic configs stored for this broker (eff differs from
// server.properties there).
func (b *Broker) applyStartKeystores(eff *config.Broker) error {
	for _, l := range b.cfg.Listeners {
		if !b.cfg.ListenerProtocol(l.Name).UsesTLS() {
			continue
		}
		same := true
		for _, k := range config.KeystoreKeys(l.Name) {
			if eff.Raw[k] != b.cfg.Raw[k] {
				same = false
			}
		}
		if same {
			continue
		}
		tc, err := listenerTLS(eff, l.Name)
		if err != nil {
			return err
		}
		if err := b.server.SetListenerTLS(l.Name, tc); err != nil {
			return err
		}
	}
	return nil
}

// cleanerConfig is the storage cleaner configuration of cfg
// (log.cleaner.dedupe.buffer.size, log.cleaner.io.buffer.load.factor,
// log.cleaner.threads, log.cleaner.io.buffer.size,
// log.cleaner.io.max.bytes.per.second).
func cleanerConfig(cfg *config.Broker) storage.CleanerConfig {
	return storage.CleanerConfig{DedupeBufferSize: cfg.LogCleanerDedupeBufferSize, LoadFactor: cfg.LogCleanerLoadFactor,
		Threads: cfg.CleanerIO.Threads, IOBufferSize: cfg.CleanerIO.BufferSize, MaxIOBytesPerSecond: cfg.CleanerIO.MaxBytesPerSecond}
}
