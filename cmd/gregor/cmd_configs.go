package main

import (
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/configs"
)

// `gregor configs` = kafka-configs.sh.
func init() {
	var o configs.Options
	var commandConfig string
	cmd := &cobra.Command{
		Use:   "configs",
		Short: "Describe and alter topic and broker configs (kafka-configs.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Args = os.Args[2:]
			props, err := commandConfigProps(commandConfig, "")
			if err != nil {
				return err
			}
			if code := configs.Main(cmd.Context(), o, props, os.Stdout, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the Kafka server(s) to connect to, host:port[,host:port]")
	f.StringVar(&o.ZooKeeper, "zookeeper", "", "DEPRECATED (Kafka 2.x): the ZooKeeper connection string host:port[,host:port][/chroot]; topic configs are read and written there directly")
	f.StringVar(&commandConfig, "command-config", "", "property file with client configs")
	f.StringVar(&o.EntityType, "entity-type", "", "type of entity: topics, brokers, broker-loggers, users or clients (users and clients together: a (user, client-id) quota)")
	f.StringVar(&o.EntityName, "entity-name", "", "name of entity (topic name or broker id)")
	f.BoolVar(&o.EntityDefault, "entity-default", false, "the cluster-wide default of the entity type (brokers)")
	f.StringVar(&o.Topic, "topic", "", "the topic's configs (= --entity-type topics --entity-name)")
	f.StringVar(&o.Broker, "broker", "", "the broker's configs (= --entity-type brokers --entity-name)")
	f.BoolVar(&o.BrokerDefaults, "broker-defaults", false, "the cluster-wide broker defaults (= --entity-type brokers --entity-default)")
	f.StringVar(&o.BrokerLogger, "broker-logger", "", "the broker's log levels (= --entity-type broker-loggers --entity-name)")
	f.StringVar(&o.User, "user", "", "the user's quotas or SCRAM credentials (= --entity-type users --entity-name)")
	f.StringVar(&o.Client, "client", "", "the client id's quotas (= --entity-type clients --entity-name)")
	f.BoolVar(&o.UserDefaults, "user-defaults", false, "the default user quotas (= --entity-type users --entity-default)")
	f.BoolVar(&o.ClientDefaults, "client-defaults", false, "the default client-id quotas (= --entity-type clients --entity-default)")
	f.BoolVar(&o.Describe, "describe", false, "list configs for the given entity")
	f.BoolVar(&o.Alter, "alter", false, "alter the configuration for the entity")
	f.BoolVar(&o.All, "all", false, "with --describe: all configs, not only the dynamic ones")
	f.StringVar(&o.AddConfig, "add-config", "", "key=value pairs to add or set, comma separated; values with commas in square brackets: k=[a,b]")
	f.StringVar(&o.DeleteConfig, "delete-config", "", "config keys to remove, comma separated")
	root.AddCommand(cmd)
}
