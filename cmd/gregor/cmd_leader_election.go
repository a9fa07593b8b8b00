package main

import (
	"github.com/spf13/cobra"
	"os"

	"gregor/cmd/internal/leaderelection"
)

// `gregor leader-election` = kafka-leader-election.sh.
func init() {
	o := leaderelection.Options{Partition: -1}
	var adminConfig string
	cmd := &cobra.Command{
		Use:   "leader-election",
		Short: "Elect preferred or unclean leaders (kafka-leader-election.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			props, err := commandConfigProps(adminConfig, "")
			if err != nil {
				return err
			}
			if code := leaderelection.Main(cmd.Context(), o, props, os.Stdout, os.Stderr); code != 0 {
				return errPrinted(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the server(s) to connect to, host:port[,host:port]")
	f.StringVar(&adminConfig, "admin.config", "", "property file with Admin client configs")
	f.StringVar(&o.ElectionType, "election-type", "", "REQUIRED: type of election to attempt: preferred or unclean")
	f.StringVar(&o.Topic, "topic", "", "name of the topic for which to elect (requires --partition)")
	f.Int32Var(&o.Partition, "partition", -1, "partition id for which to elect (requires --topic)")
	f.BoolVar(&o.AllTopicPartitions, "all-topic-partitions", false, "elect for every eligible topic partition")
	f.StringVar(&o.PathToJSONFile, "path-to-json-file", "", "JSON file of the partitions: {\"partitions\":[{\"topic\":\"t\",\"partition\":0}]}")
	root.AddCommand(cmd)
}
