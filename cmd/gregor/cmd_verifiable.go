package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/clientutil"
	"gregor/cmd/internal/verifiable"
)

// `gregor verifiable-producer` = kafka-verifiable-producer.sh and
// `gregor verifiable-consumer` = kafka-verifiable-consumer.sh.
func init() {
	var po verifiable.ProducerOptions
	var valuePrefix, repeatingKeys int
	pcmd := &cobra.Command{
		Use:   "verifiable-producer",
		Short: "Produce increasing integers, printing JSON events of what was acked (kafka-verifiable-producer.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			if f.Changed("value-prefix") {
				po.ValuePrefix = &valuePrefix
			}
			if f.Changed("repeating-keys") {
				po.RepeatingKeys = &repeatingKeys
			}
			code := clientutil.WithSignals(cmd.Context(), func(ctx context.Context) int {
				return verifiable.RunProducer(ctx, po, f.Changed("bootstrap-server"), f.Changed("broker-list"), os.Stdout, os.Stderr)
			})
			if code != 0 {
				return errPrinted(code)
			}
			return nil
		},
	}
	f := pcmd.Flags()
	f.StringVar(&po.Topic, "topic", "", "REQUIRED: produce messages to this topic")
	f.StringVar(&po.BootstrapServer, "bootstrap-server", "", "the server(s) to connect to, HOST1:PORT1,HOST2:PORT2 (this or --broker-list is required)")
	f.StringVar(&po.BrokerList, "broker-list", "", "DEPRECATED, use --bootstrap-server instead")
	f.Int64Var(&po.MaxMessages, "max-messages", -1, "produce this many messages; -1 = until the process is stopped")
	f.Int64Var(&po.Throughput, "throughput", -1, "if >= 0, throttle to about this many messages/sec")
	f.IntVar(&po.Acks, "acks", -1, "acks required on each produced message: 0, 1 or -1")
	f.StringVar(&po.ProducerConfig, "producer.config", "", "producer config properties file")
	f.Int64Var(&po.CreateTime, "message-create-time", -1, "send messages with creation time starting at this value, ms since epoch")
	f.IntVar(&valuePrefix, "value-prefix", 0, "if given, each value is this prefix and a dot before the number")
	f.IntVar(&repeatingKeys, "repeating-keys", 0, "if given, keys go 0, 1, … up to this number (exclusive), then start at 0 again")
	root.AddCommand(pcmd)

	var co verifiable.ConsumerOptions
	ccmd := &cobra.Command{
		Use:   "verifiable-consumer",
		Short: "Consume a topic in a group, printing JSON events of rebalances, records and commits (kafka-verifiable-consumer.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			code := clientutil.WithSignals(cmd.Context(), func(ctx context.Context) int {
				return verifiable.RunConsumer(ctx, co, f.Changed("bootstrap-server"), f.Changed("broker-list"), os.Stdout, os.Stderr)
			})
			if code != 0 {
				return errPrinted(code)
			}
			return nil
		},
	}
	f = ccmd.Flags()
	f.StringVar(&co.BootstrapServer, "bootstrap-server", "", "the server(s) to connect to, HOST1:PORT1,HOST2:PORT2 (this or --broker-list is required)")
	f.StringVar(&co.BrokerList, "broker-list", "", "DEPRECATED, use --bootstrap-server instead")
	f.StringVar(&co.Topic, "topic", "", "REQUIRED: consume messages from this topic")
	f.StringVar(&co.GroupProtocol, "group-protocol", "classic", "group protocol: classic (consumer, KIP-848, is not supported)")
	f.StringVar(&co.GroupRemoteAssignor, "group-remote-assignor", "", "group remote assignor; only for --group-protocol consumer (not supported)")
	f.StringVar(&co.GroupID, "group-id", "", "REQUIRED: the group id shared among members of the consumer group")
	f.StringVar(&co.GroupInstanceID, "group-instance-id", "", "a unique identifier of the consumer instance (static membership)")
	f.Int64Var(&co.MaxMessages, "max-messages", -1, "consume this many messages; -1 = until the process is stopped")
	f.IntVar(&co.SessionTimeout, "session-timeout", 30000, "the consumer's session timeout, ms")
	f.BoolVar(&co.Verbose, "verbose", false, "print a record_data event for each consumed record")
	f.BoolVar(&co.EnableAutocommit, "enable-autocommit", false, "enable offset auto-commit on the consumer")
	f.StringVar(&co.ResetPolicy, "reset-policy", "earliest", "reset policy: earliest, latest or none")
	f.StringVar(&co.AssignmentStrategy, "assignment-strategy", "org.apache.kafka.clients.consumer.RangeAssignor", "assignment strategy, e.g. org.apache.kafka.clients.consumer.RoundRobinAssignor")
	f.StringVar(&co.ConsumerConfig, "consumer.config", "", "consumer config properties file (the flags override its keys)")
	root.AddCommand(ccmd)
}
