package broker

import (
	"gregor/logging"
	"gregor/replication/metastore"
)

// Option changes how Start assembles a broker. The gregor binary passes
// none; in-process clusters in tests (cmd/internal/clustertest) do.
type Option func(*Broker)

// WithStore makes the broker use store as its metadata store instead of
// opening ZooKeeper (zookeeper.connect) or the embedded store. Cluster
// mode is still chosen by zookeeper.connect being set: give it any
// non-empty value (it is not dialled) for a store shared by several
// brokers, such as a metastore.MemorySession. The broker closes store in
// Close, as it closes a store it opened.
func WithStore(store metastore.Store) Option {
	return func(b *Broker) { b.injected = store }
}

// BeforeServing makes Start call fn once everything is up, just before the
// listeners start answering requests; an error from fn fails Start (and
// stops what it started). The gregor binary writes pid.file here, so that
// a client that got an answer also finds the pid file (a harness or init
// script that waits for the port reads it next).
func BeforeServing(fn func() error) Option {
	return func(b *Broker) { b.beforeServing = fn }
}

// Kill stops the broker as abruptly as the process allows: no controlled
// shutdown (leadership is not moved away first), then the same stop as
// Close so that every goroutine, actor, file and socket still ends. With
// its metadata session cut off first (metastore.MemorySession.Disconnect)
// nothing of the stop reaches the cluster's metadata, as after a kill -9.
// Idempotent, and Close after Kill does nothing more.
func (b *Broker) Kill() error {
	b.started = false
	return b.Close()
}

// WithLogLevels makes levels the broker's run-time log level registry
// (BROKER_LOGGER resources): the gregor binary builds its logger enabled
// at debug and wrapped by levels at root INFO, so that a logger set to
// DEBUG at run time logs its debug lines. Without it Start makes a
// registry over the logger it is given.
func WithLogLevels(levels *logging.Levels) Option {
	return func(b *Broker) { b.levels = levels }
}
