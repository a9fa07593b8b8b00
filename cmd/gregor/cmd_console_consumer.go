package main

import (
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/consoleconsumer"
)

// `gregor console-consumer` = kafka-console-consumer.sh.
func init() {
	var o consoleconsumer.Options
	var whitelist, isolation string
	var newConsumer, skipOnError, systest bool
	cmd := &cobra.Command{
		Use:   "console-consumer",
		Short: "Consume a topic and print its records (kafka-console-consumer.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Include == "" {
				o.Include = whitelist
			}
			if cmd.Flags().Changed("isolation-level") {
				o.ConsumerProps = append(o.ConsumerProps, "isolation.level="+isolation)
			}
			if code := consoleconsumer.MainWithSignals(cmd.Context(), o, os.Stdout, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the server(s) to connect to, host:port[,host:port]")
	f.StringVar(&o.ZooKeeper, "zookeeper", "", "DEPRECATED: ZooKeeper connection string host:port[/chroot]; the brokers are found under /brokers/ids (use --bootstrap-server); with --group, the old consumer: offsets in ZooKeeper under /consumers/<group>")
	f.StringVar(&o.Topic, "topic", "", "the topic to consume")
	f.StringVar(&o.Include, "include", "", "regular expression of the topics to consume (instead of --topic)")
	f.StringVar(&whitelist, "whitelist", "", "DEPRECATED, use --include")
	f.StringVar(&o.Group, "group", "", "the consumer group id")
	f.Int32Var(&o.Partition, "partition", -1, "consume only this partition (starts at the end unless --offset/--from-beginning)")
	f.StringVar(&o.Offset, "offset", "", "with --partition: earliest, latest or an offset (default latest)")
	f.BoolVar(&o.FromBeginning, "from-beginning", false, "start with the earliest record when there is no committed offset")
	f.BoolVar(&o.DeleteConsumerOffsets, "delete-consumer-offsets", false, "with --zookeeper and --group: delete the group's /consumers/<group> in ZooKeeper before consuming")
	f.IntVar(&o.MaxMessages, "max-messages", -1, "exit after this many records")
	f.Int64Var(&o.TimeoutMs, "timeout-ms", -1, "exit when no record arrived for this many milliseconds")
	f.StringArrayVar(&o.Properties, "property", nil, "formatter property: print.timestamp, print.key, print.offset, print.partition, print.headers, print.value, key.separator, line.separator, headers.separator, null.literal")
	f.StringArrayVar(&o.ConsumerProps, "consumer-property", nil, "consumer property k=v (group.id, auto.offset.reset, fetch.max.wait.ms, client.id…)")
	f.StringVar(&o.ConsumerConfig, "consumer.config", "", "consumer properties file")
	f.StringVar(&o.Formatter, "formatter", "", "message formatter class (only DefaultMessageFormatter)")
	f.StringVar(&isolation, "isolation-level", "read_uncommitted", "read_committed or read_uncommitted")
	f.BoolVar(&skipOnError, "skip-message-on-error", false, "accepted for compatibility")
	f.BoolVar(&systest, "enable-systest-events", false, "accepted for compatibility")
	f.BoolVar(&newConsumer, "new-consumer", false, "accepted for compatibility (0.10-era flag; the consumer is always the new one)")
	_ = f.MarkHidden("new-consumer")
	root.AddCommand(cmd)
}
