package main

import (
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/topics"
)

// `gregor topics` = kafka-topics.sh.
func init() {
	var o topics.Options
	var commandConfig string
	cmd := &cobra.Command{
		Use:   "topics",
		Short: "Create, list, describe, alter and delete topics (kafka-topics.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			props, err := commandConfigProps(commandConfig, topics.ErrorPrefix)
			if err != nil {
				return err
			}
			if code := topics.Main(cmd.Context(), o, props, os.Stdout, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the Kafka server(s) to connect to, host:port[,host:port]")
	f.StringVar(&o.ZooKeeper, "zookeeper", "", "DEPRECATED: ZooKeeper connection string host:port[,host:port...][/chroot]; works straight through ZooKeeper (use --bootstrap-server)")
	f.StringVar(&commandConfig, "command-config", "", "property file with client configs")
	f.BoolVar(&o.Create, "create", false, "create a new topic")
	f.BoolVar(&o.List, "list", false, "list all available topics")
	f.BoolVar(&o.Describe, "describe", false, "list details for the given topics")
	f.BoolVar(&o.Delete, "delete", false, "delete a topic")
	f.BoolVar(&o.Alter, "alter", false, "alter the number of partitions of a topic")
	f.StringVar(&o.Topic, "topic", "", "the topic to create, alter, describe or delete; a regular expression except with --create")
	f.Int32Var(&o.Partitions, "partitions", -1, "number of partitions (create: default num.partitions; alter: the new total)")
	f.Int32Var(&o.ReplicationFactor, "replication-factor", -1, "replication factor of each partition (default default.replication.factor)")
	f.StringVar(&o.ReplicaAssignment, "replica-assignment", "", "manual partition-to-broker assignment for the topic being created or altered: broker_id_for_part1_replica1:broker_id_for_part1_replica2,broker_id_for_part2_replica1:broker_id_for_part2_replica2,...")
	f.StringArrayVar(&o.Configs, "config", nil, "a topic config override, name=value (repeatable)")
	f.BoolVar(&o.IfExists, "if-exists", false, "with --alter, --delete or --describe: only act if the topic exists")
	f.BoolVar(&o.IfNotExists, "if-not-exists", false, "with --create: only create if the topic does not exist")
	f.BoolVar(&o.DisableRackAware, "disable-rack-aware", false, "with --zookeeper --create/--alter: assign replicas ignoring broker.rack")
	f.BoolVar(&o.ExcludeInternal, "exclude-internal", false, "exclude internal topics from --list and --describe")
	f.BoolVar(&o.UnderReplicated, "under-replicated-partitions", false, "with --describe: only show under-replicated partitions")
	f.BoolVar(&o.Unavailable, "unavailable-partitions", false, "with --describe: only show partitions whose leader is not available")
	f.BoolVar(&o.UnderMinISR, "under-min-isr-partitions", false, "with --describe: only show partitions whose ISR is smaller than min.insync.replicas (not with --zookeeper)")
	f.BoolVar(&o.AtMinISR, "at-min-isr-partitions", false, "with --describe: only show partitions whose ISR equals min.insync.replicas (not with --zookeeper)")
	root.AddCommand(cmd)
}
