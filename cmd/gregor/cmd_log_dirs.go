package main

import (
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/logdirs"
)

// `gregor log-dirs` = kafka-log-dirs.sh.
func init() {
	var o logdirs.Options
	var commandConfig string
	cmd := &cobra.Command{
		Use:   "log-dirs",
		Short: "Describe the log directories of brokers (kafka-log-dirs.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			props, err := commandConfigProps(commandConfig, "")
			if err != nil {
				return err
			}
			if code := logdirs.Main(cmd.Context(), o, props, os.Stdout, os.Stderr); code != 0 {
				return errPrinted(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the server(s) to use for bootstrapping")
	f.StringVar(&commandConfig, "command-config", "", "property file containing configs to be passed to the Admin client")
	f.BoolVar(&o.Describe, "describe", false, "describe the specified log directories on the specified brokers")
	f.StringVar(&o.TopicList, "topic-list", "", "the list of topics to be queried, \"topic1,topic2,topic3\" (default: all topics)")
	f.StringVar(&o.BrokerList, "broker-list", "", "the list of brokers to be queried, \"0,1,2\" (default: every broker in the cluster)")
	root.AddCommand(cmd)
}
