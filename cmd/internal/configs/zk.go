package configs

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"gregor/cmd/internal/clientutil"
	"gregor/replication/controller"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/replication/zkstore"
)

// ZooKeeperSessionTimeout is the session timeout of the tool's ZooKeeper
// client (Kafka's ConfigCommand uses 30000 ms).
var ZooKeeperSessionTimeout = 30 * time.Second

// openZooKeeper connects to a zookeeper.connect-style string
// ("host:port[,host:port…][/chroot]"); a bad string is a usage error.
func openZooKeeper(connect string) (metastore.Store, error) {
	s, err := zkstore.Open(connect, zkstore.Config{SessionTimeout: ZooKeeperSessionTimeout})
	if errors.Is(err, zkstore.ErrBadConnect) {
		return nil, clientutil.Usage("--zookeeper: %v", err)
	}
	return s, err
}

// RunZooKeeper executes a resolved --zookeeper command straight against
// ZooKeeper, as Kafka 2.x's ConfigCommand does (no broker involved):
//
//   - --describe prints "Configs for topic '<t>' are k=v,k2=v2" from
//     /config/topics/<t>, for the named topic or, without a name, for
//     every topic that has a config znode.
//   - --alter merges --add-config into the topic's overrides and removes
//     --delete-config keys (a key the topic does not override fails with
//     "Invalid config(s): k"), validates the result, writes
//     /config/topics/<t> and a /config/changes notification that every
//     broker applies (controller.ChangeTopicConfig), then prints
//     "Completed updating config for entity: topic '<t>'.".
//
// Topics here; users (SCRAM credentials) in users.go; brokers'
// dynamic configs in brokers_zk.go. Errors: a missing
// topic (UNKNOWN_TOPIC_OR_PARTITION), an invalid config (INVALID_CONFIG),
// a store failure.
func RunZooKeeper(o Options, store metastore.Store, stdout io.Writer) error {
	if o.quota != nil {
		return runQuotasZooKeeper(o, store, o.quota, stdout) // quotas.go
	}
	if o.EntityType == Users {
		return runUsersZooKeeper(o, store, stdout) // users.go
	}
	if o.EntityType == Brokers {
		return runBrokersZooKeeper(o, store, stdout) // brokers_zk.go
	}
	if o.Alter {
		return alterZooKeeper(o, store, stdout)
	}
	names := []string{o.EntityName}
	if o.EntityName == "" {
		var err error
		names, err = store.Children(zkmeta.ConfigTopicsPath)
		if errors.Is(err, metastore.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		slices.Sort(names)
	}
	for _, n := range names {
		cfg, err := readOverrides(store, n)
		if err != nil {
			return err
		}
		parts := make([]string, 0, len(cfg))
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			parts = append(parts, k+"="+cfg[k])
		}
		fmt.Fprintf(stdout, "Configs for topic '%s' are %s\n", n, strings.Join(parts, ","))
	}
	return nil
}

// readOverrides reads /config/topics/<t> as Kafka's fetchEntityConfig
// does: an absent znode is no overrides.
func readOverrides(store metastore.Store, topic string) (map[string]string, error) {
	data, _, err := store.Get(zkmeta.TopicConfigPath(topic))
	if errors.Is(err, metastore.ErrNoNode) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return zkmeta.DecodeConfig(data)
}

func alterZooKeeper(o Options, store metastore.Store, stdout io.Writer) error {
	var keys []string
	var vals map[string]string
	if o.AddConfig != "" {
		var err error
		if keys, vals, err = ParseAddConfig(o.AddConfig); err != nil {
			return clientutil.Usage("%v", err)
		}
	}
	deletes := ParseDeleteConfig(o.DeleteConfig)
	_, err := controller.ChangeTopicConfig(store, o.EntityName, addDelete(keys, vals, deletes), false)
	var ce *controller.Error
	if errors.As(err, &ce) && ce.Message != "" {
		return clientutil.WithMessage(ce.Code, ce.Message) // Kafka prints the exception's message alone
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Completed updating config for entity: topic '%s'.\n", o.EntityName)
	return nil
}

// addDelete is the edit of --add-config keys=vals and --delete-config
// deletes on an entity's znode config, as Kafka 2.x's ConfigCommand with
// --zookeeper: deleting a key the config does not have is refused
// ("Invalid config(s): …") and nothing is written.
func addDelete(keys []string, vals map[string]string, deletes []string) func(map[string]string) error {
	return func(m map[string]string) error {
		var invalid []string
		for _, k := range deletes {
			if _, ok := m[k]; !ok {
				invalid = append(invalid, k)
			}
		}
		if len(invalid) > 0 {
			return fmt.Errorf("Invalid config(s): %s", strings.Join(invalid, ","))
		}
		for _, k := range keys {
			m[k] = vals[k]
		}
		for _, k := range deletes {
			delete(m, k)
		}
		return nil
	}
}
