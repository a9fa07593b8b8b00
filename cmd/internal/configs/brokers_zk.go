package configs

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"gregor/cmd/internal/clientutil"
	"gregor/config"
	dynconfig "gregor/config/dynamic"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// zkWhileRunning are the broker configs Kafka 2.x's ConfigCommand lets
// --zookeeper change while brokers run
// (BrokerConfigsUpdatableUsingZooKeeperWhileBrokerRunning): the
// replication throttles. Others only before the broker (or, for the
// default, any broker) runs.
var zkWhileRunning = map[string]bool{
	"leader.replication.throttled.rate": true, "follower.replication.throttled.rate": true,
	"replica.alter.log.dirs.io.max.bytes.per.second": true,
}

// brokerEntityText is Kafka's ConfigEntity text: "brokers '0'" or "default brokers".
func brokerEntityText(o Options) string {
	if o.EntityDefault {
		return "default brokers"
	}
	return fmt.Sprintf("brokers '%s'", o.EntityName)
}

// runBrokersZooKeeper is --entity-type brokers with --zookeeper, as Kafka
// 2.x's ConfigCommand: --describe prints "Configs for brokers '<id>' are
// k=v,…" ("default brokers" for --entity-default; without a name, every
// /config/brokers child); --alter writes /config/brokers/<entity> and a
// /config/changes notification after config.ValidateDynamic (Gregor
// validates what Kafka 2.x left to the broker), refusing keys other than
// the replication throttles while the broker (for the default: any
// broker) is registered in /brokers/ids, with Kafka's message.
func runBrokersZooKeeper(o Options, store metastore.Store, stdout io.Writer) error {
	if !o.Alter {
		var ents []string
		switch {
		case o.EntityDefault:
			ents = []string{config.DefaultEntity}
		case o.EntityName != "":
			ents = []string{o.EntityName}
		default:
			kids, err := store.Children(zkmeta.ConfigBrokersPath)
			if err != nil && !isNoNode(err) {
				return err
			}
			ents = slices.Sorted(slices.Values(kids))
		}
		for _, e := range ents {
			cfg, _, err := dynconfig.Read(store, e)
			if err != nil {
				return err
			}
			parts := make([]string, 0, len(cfg))
			for _, k := range slices.Sorted(maps.Keys(cfg)) {
				parts = append(parts, k+"="+cfg[k])
			}
			text := fmt.Sprintf("brokers '%s'", e)
			if e == config.DefaultEntity {
				text = "default brokers"
			}
			fmt.Fprintf(stdout, "Configs for %s are %s\n", text, strings.Join(parts, ","))
		}
		return nil
	}
	var keys []string
	var vals map[string]string
	if o.AddConfig != "" {
		var err error
		if keys, vals, err = ParseAddConfig(o.AddConfig); err != nil {
			return clientutil.Usage("%v", err)
		}
	}
	// Password configs are stored encrypted with the brokers' secret, which
	// Kafka 2.x's tool takes from --add-config password.encoder.secret=…
	// (and the other password.encoder.* keys), never storing them.
	encKV := map[string]string{}
	keys = slices.DeleteFunc(keys, func(k string) bool {
		if strings.HasPrefix(k, "password.encoder.") {
			encKV[k] = vals[k]
			return true
		}
		return false
	})
	encCfg, err := config.Parse(encKV, nil)
	if err != nil {
		return clientutil.Usage("%v", err)
	}
	enc := encCfg.PasswordEncoder
	for _, k := range keys {
		if config.IsPasswordConfig(k) && enc.Secret == "" {
			return fmt.Errorf("Password encoder secret not specified")
		}
	}
	var running []string
	for _, k := range keys {
		if !zkWhileRunning[k] {
			running = append(running, k)
		}
	}
	if len(running) > 0 {
		msg := fmt.Sprintf("requirement failed: --bootstrap-server option must be specified to update broker configs Set(%s)", strings.Join(running, ", "))
		const info = " Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers are started to enable encrypted password configs to be stored in ZooKeeper."
		if o.EntityDefault {
			ids, err := store.Children(zkmeta.BrokerIDsPath)
			if err != nil && !isNoNode(err) {
				return err
			}
			if len(ids) > 0 {
				return fmt.Errorf("%s for default cluster if any broker is running.%s", msg, info)
			}
		} else if ok, err := store.Exists(zkmeta.BrokerPath(parseID(o.EntityName))); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("%s when broker %s is running.%s", msg, o.EntityName, info)
		}
	}
	entity := o.EntityName
	if o.EntityDefault {
		entity = config.DefaultEntity
	}
	deletes := ParseDeleteConfig(o.DeleteConfig)
	_, err = dynconfig.Change(store, entity, enc, addDelete(keys, vals, deletes), nil, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Completed updating config for entity: %s.\n", brokerEntityText(o))
	return nil
}

func isNoNode(err error) bool { return errors.Is(err, metastore.ErrNoNode) }

// parseID is a broker id resolve already checked.
func parseID(s string) int32 {
	n, _ := strconv.ParseInt(s, 10, 32)
	return int32(n)
}
