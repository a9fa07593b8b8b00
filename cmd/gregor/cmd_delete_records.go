package main

import (
	"github.com/spf13/cobra"
	"os"

	"gregor/cmd/internal/deleterecords"
)

// `gregor delete-records` = kafka-delete-records.sh.
func init() {
	var o deleterecords.Options
	var commandConfig string
	cmd := &cobra.Command{
		Use:   "delete-records",
		Short: "Delete records of partitions below given offsets (kafka-delete-records.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			props, err := commandConfigProps(commandConfig, "")
			if err != nil {
				return err
			}
			if code := deleterecords.Main(cmd.Context(), o, props, os.Stdout, os.Stderr); code != 0 {
				return errPrinted(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the server to connect to")
	f.StringVar(&o.OffsetJSONFile, "offset-json-file", "", "REQUIRED: the JSON file with offset per partition: {\"partitions\":[{\"topic\": \"foo\", \"partition\": 1, \"offset\": 1}], \"version\":1}")
	f.StringVar(&commandConfig, "command-config", "", "a property file containing configs to be passed to the Admin client")
	root.AddCommand(cmd)
}
