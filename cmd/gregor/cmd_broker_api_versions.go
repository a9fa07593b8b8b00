package main

import (
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/brokerapiversions"
)

// `gregor broker-api-versions` = kafka-broker-api-versions.sh.
func init() {
	var o brokerapiversions.Options
	var commandConfig string
	cmd := &cobra.Command{
		Use:   "broker-api-versions",
		Short: "Print the API versions every broker supports (kafka-broker-api-versions.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			props, err := commandConfigProps(commandConfig, "")
			if err != nil {
				return err
			}
			if code := brokerapiversions.Main(cmd.Context(), o, props, os.Stdout, os.Stderr); code != 0 {
				return errPrinted(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the server to connect to")
	f.StringVar(&commandConfig, "command-config", "", "a property file containing configs to be passed to the Admin client")
	root.AddCommand(cmd)
}
