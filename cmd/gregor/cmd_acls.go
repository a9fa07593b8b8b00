package main

import (
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/acls"
)

// `gregor acls` = kafka-acls.sh (Kafka's AclCommand).
func init() {
	var o acls.Options
	cmd := &cobra.Command{
		Use:   "acls",
		Short: "Add, remove and list ACLs, through a broker or in ZooKeeper (kafka-acls.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Record(cmd.Flags())
			if code := acls.Main(cmd.Context(), o, os.Stdin, os.Stdout, os.Stderr); code != 0 {
				return errPrinted(code)
			}
			return nil
		},
	}
	o.Bind(cmd.Flags())
	root.AddCommand(cmd)
}
