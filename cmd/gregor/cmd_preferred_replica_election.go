package main

import (
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/leaderelection"
)

// `gregor preferred-replica-election` = kafka-preferred-replica-election.sh.
func init() {
	var o leaderelection.PreferredOptions
	var adminConfig string
	cmd := &cobra.Command{
		Use:   "preferred-replica-election",
		Short: "Move leadership back to the preferred replicas (kafka-preferred-replica-election.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			props, err := commandConfigProps(adminConfig, "")
			if err != nil {
				return err
			}
			if code := leaderelection.PreferredMain(cmd.Context(), o, props, os.Stdout, os.Stderr); code != 0 {
				return errPrinted(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.ZooKeeper, "zookeeper", "", "DEPRECATED: the ZooKeeper connection string host:port[,host:port...][/chroot]")
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "the server(s) to connect to (uses ElectLeaders), host:port[,host:port]")
	f.StringVar(&adminConfig, "admin.config", "", "property file with Admin client configs (with --bootstrap-server)")
	f.StringVar(&o.PathToJSONFile, "path-to-json-file", "", "JSON file of the partitions; default: every partition")
	root.AddCommand(cmd)
}
