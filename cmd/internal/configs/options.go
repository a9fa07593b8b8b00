// Package configs is `gregor configs` (kafka-configs.sh, Kafka's
// ConfigCommand) for topics and brokers over the Kafka protocol:
// --describe [--all] through DescribeConfigs, --alter --add-config /
// --delete-config through IncrementalAlterConfigs (KIP-339), with
// ConfigCommand's flags and output; with --zookeeper, topic configs are
// read and written in ZooKeeper directly, as Kafka 2.x's ConfigCommand did
// (zk.go). Users' SCRAM credentials (--entity-type users,
// SCRAM-SHA-256=[iterations=N,password=P]) go through
// Describe/AlterUserScramCredentials or, with --zookeeper, straight to
// /config/users (users.go).
package configs

import (
	"fmt"
	"strconv"
	"strings"

	"gregor/cmd/internal/clientutil"
)

// Options are kafka-configs.sh's flags.
type Options struct {
	BootstrapServer string
	ZooKeeper       string // --zookeeper host:port[/chroot]: straight to ZooKeeper (topics only)
	EntityType      string // --entity-type: topics or brokers
	EntityName      string // --entity-name; "" = every entity (describe) / none
	EntityDefault   bool   // --entity-default: the cluster-wide broker default
	Topic           string // --topic N = --entity-type topics --entity-name N (Kafka 2.8+)
	Broker          string // --broker N = --entity-type brokers --entity-name N
	BrokerDefaults  bool   // --broker-defaults = --entity-type brokers --entity-default
	BrokerLogger    string // --broker-logger N = --entity-type broker-loggers --entity-name N
	Describe, Alter bool
	All             bool   // --all: with --describe, every config, not only the dynamic ones
	AddConfig       string // --add-config k=v,k2=[a,b]
	DeleteConfig    string // --delete-config k,k2
	Args            []string
	// Client quota shorthands (ConfigCommand's --user, --client,
	// --user-defaults, --client-defaults; quotas.go).
	User, Client                 string
	UserDefaults, ClientDefaults bool
	quota                        []quotaPart // set by resolve for a client quota command
}

// Entity types this tool serves.
const (
	Topics        = "topics"
	Brokers       = "brokers"
	BrokerLoggers = "broker-loggers" // a broker's run-time log levels (BROKER_LOGGER resources; loggers.go)
)

// resolve folds the shorthands into EntityType/EntityName and checks the
// combination (ConfigCommandOptions.checkArgs).
func (o *Options) resolve() error {
	short := 0
	if o.Topic != "" {
		short++
		o.EntityType, o.EntityName = Topics, o.Topic
	}
	if o.Broker != "" {
		short++
		o.EntityType, o.EntityName = Brokers, o.Broker
	}
	if o.BrokerDefaults {
		short++
		o.EntityType, o.EntityDefault = Brokers, true
	}
	if o.BrokerLogger != "" {
		short++
		o.EntityType, o.EntityName = BrokerLoggers, o.BrokerLogger
	}
	if short > 1 {
		return clientutil.Usage("Only one of --topic, --broker, --broker-defaults or --broker-logger may be specified")
	}
	if o.Describe == o.Alter {
		return clientutil.Usage("Command must include exactly one action: --describe, --alter")
	}
	if (o.BootstrapServer == "") == (o.ZooKeeper == "") {
		return clientutil.Usage("Only one of --bootstrap-server or --zookeeper must be specified")
	}
	if ok, err := o.resolveQuota(); ok || err != nil { // quotas.go
		return err
	}
	if o.EntityType == "" {
		return clientutil.Usage("At least one --entity-type must be specified")
	}
	switch o.EntityType {
	case Topics, Brokers, Users:
	case BrokerLoggers:
		if o.ZooKeeper != "" { // log levels live in the broker process only
			return clientutil.Usage("Invalid entity type broker-loggers, the entity type must be one of topics, users, clients, brokers with a --zookeeper argument")
		}
	case "ips":
		return clientutil.Usage("--entity-type %s is not supported yet; only topics, brokers, broker-loggers, users and clients", o.EntityType)
	default:
		return clientutil.Usage("Invalid entity type %s, the entity type must be one of topics, clients, users, brokers, broker-loggers, ips", o.EntityType)
	}
	if o.EntityDefault && o.EntityType != Brokers && o.EntityType != Users {
		return clientutil.Usage("--entity-default is only valid with --entity-type brokers here")
	}
	if o.EntityDefault && o.EntityName != "" {
		return clientutil.Usage("--entity-name and --entity-default cannot be used together")
	}
	if o.EntityType == Users { // refused before connecting (users.go)
		if err := checkUserOptions(*o); err != nil {
			return err
		}
		if _, err := parseUserAlter(*o); err != nil && o.Alter {
			return err
		}
	}
	if (o.EntityType == Brokers || o.EntityType == BrokerLoggers) && o.EntityName != "" {
		if _, err := strconv.ParseInt(o.EntityName, 10, 32); err != nil {
			return clientutil.Usage("The entity name for %s must be a valid integer broker id, but it is: %s", o.EntityType, o.EntityName)
		}
	}
	if o.EntityType == BrokerLoggers && o.Describe && o.EntityName == "" {
		return clientutil.Usage("an entity name must be specified with --describe of broker-loggers")
	}
	if o.All && !o.Describe {
		return clientutil.Usage("Option \"[all]\" can't be used with option \"[alter]\"")
	}
	if o.Alter {
		if o.EntityName == "" && !o.EntityDefault {
			return clientutil.Usage("An entity name must be specified with --alter of %s", o.EntityType)
		}
		if o.AddConfig == "" && o.DeleteConfig == "" {
			return clientutil.Usage("At least one of --add-config or --delete-config must be specified with --alter")
		}
	} else if o.AddConfig != "" || o.DeleteConfig != "" {
		return clientutil.Usage("Option \"[add-config]\" / \"[delete-config]\" can only be used with --alter")
	}
	return nil
}

// splitOutside splits s at every sep that is not inside square brackets.
func splitOutside(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// ParseAddConfig parses --add-config as Kafka's ConfigCommand does:
// "k1=v1,k2=[a,b]" — entries split at commas outside square brackets, each
// exactly one key=value (whitespace around '=' dropped), brackets removed
// from the value ("[a,b]" → "a,b"). Keys keep their last value, in order
// of first appearance.
func ParseAddConfig(s string) ([]string, map[string]string, error) {
	var keys []string
	vals := map[string]string{}
	for _, e := range splitOutside(s, ',') {
		kv := splitOutside(e, '=')
		if len(kv) != 2 || strings.TrimSpace(kv[0]) == "" {
			return nil, nil, fmt.Errorf("Invalid entity config: all configs to be added must be in the format \"key=val\".")
		}
		k := strings.TrimSpace(kv[0])
		v := strings.TrimSpace(strings.NewReplacer("[", "", "]", "").Replace(kv[1]))
		if _, dup := vals[k]; !dup {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	return keys, vals, nil
}

// ParseDeleteConfig splits --delete-config "k1,k2" into trimmed names.
func ParseDeleteConfig(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}
