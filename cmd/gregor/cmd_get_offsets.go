package main

import (
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/getoffsets"
)

// `gregor get-offsets` = kafka-get-offsets.sh (GetOffsetShell).
func init() {
	var o getoffsets.Options
	var commandConfig string
	cmd := &cobra.Command{
		Use:   "get-offsets",
		Short: "Print topic-partition offsets at a time (kafka-get-offsets.sh, GetOffsetShell)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			o.TopicSet, o.PartitionsSet, o.TPSet = f.Changed("topic"), f.Changed("partitions"), f.Changed("topic-partitions")
			props, err := commandConfigProps(commandConfig, "Error occurred: ")
			if err != nil {
				return err
			}
			if code := getoffsets.Main(cmd.Context(), o, props, os.Stdout, os.Stderr); code != 0 {
				return errPrinted(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the server(s) to connect to, HOST1:PORT1,HOST2:PORT2")
	f.StringVar(&o.BrokerList, "broker-list", "", "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified")
	f.StringVar(&o.TopicPartitions, "topic-partitions", "", "comma separated topic-partition patterns: topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3 (regex topics; ranges lower inclusive, upper exclusive)")
	f.StringVar(&o.Topic, "topic", "", "the topic to get the offsets for; a regular expression (default: all topics); not with --topic-partitions")
	f.StringVar(&o.Partitions, "partitions", "", "comma separated partition ids (default: all); not with --topic-partitions")
	f.StringVar(&o.Time, "time", "latest", "<timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / -5 or latest-tiered")
	f.StringVar(&commandConfig, "command-config", "", "property file containing configs to be passed to the Admin client")
	f.BoolVar(&o.ExcludeInternal, "exclude-internal-topics", false, "exclude internal topics (included by default)")
	root.AddCommand(cmd)
}
