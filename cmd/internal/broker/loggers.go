package broker

import (
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"gregor/logging"
)

// brokerLoggers are the names the broker gives its loggers (log.Named
// here and in the packages it starts), declared up front so that
// DescribeConfigs of the BROKER_LOGGER resource lists them and
// IncrementalAlterConfigs accepts them before they have logged anything
// (a name that logs later becomes known then). loggers_test.go checks
// that every log.Named in this package is here.
var brokerLoggers = []string{
	"config", "storage", "log-manager", "actors", "zk", "zookeeper", "controller", "controller.channel",
	"replicas", "fetcher", "groups", "txns", "txn-markers", "txn-verify", "handlers", "server", "admin",
	"dynamic-config", "quotas", "scram", "acl", "kafka.authorizer.logger",
}

// wrapLogger routes b.log through the broker's level registry (a
// WithLogLevels one, else a new one whose root level is the lowest level
// the given logger's core enables, so that what DescribeConfigs reports
// is what is logged) and declares the broker's loggers. Returns the
// wrapped logger, also in b.log.
func (b *Broker) wrapLogger() *zap.Logger {
	if b.log == nil {
		b.log = zap.NewNop()
	}
	if b.levels == nil {
		root := zapcore.LevelOf(b.log.Core())
		b.levels = logging.New(logging.KafkaLevel(root))
	}
	b.levels.Declare(brokerLoggers...)
	b.log = b.levels.Logger(b.log)
	return b.log
}
