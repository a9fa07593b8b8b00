package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/replaylog"
)

// `gregor replay-log-producer` = kafka-replay-log-producer.sh.
func init() {
	var o replaylog.Options
	var reportingMs int64
	cmd := &cobra.Command{
		Use:   "replay-log-producer",
		Short: "Copy a topic's records, from the beginning, to another topic (kafka-replay-log-producer.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ReportingInterval = time.Duration(reportingMs) * time.Millisecond
			if code := replaylog.Main(cmd.Context(), o, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BrokerList, "broker-list", "", "REQUIRED (unless --zookeeper): the broker(s) to read from and write to, host:port[,host:port]")
	f.StringVar(&o.ZooKeeper, "zookeeper", "", "ZooKeeper connection string host:port[/chroot]; finds the brokers (under /brokers/ids) when --broker-list is absent")
	f.StringVar(&o.InputTopic, "inputtopic", "", "REQUIRED: the topic to read from the beginning")
	f.StringVar(&o.OutputTopic, "outputtopic", "", "REQUIRED: the topic to produce to")
	f.Int64Var(&o.Messages, "messages", -1, "the number of records to replay (-1: all of them)")
	f.IntVar(&o.Threads, "threads", 1, "number of producer threads (accepted; one producer sends to all partitions concurrently)")
	f.Int64Var(&reportingMs, "reporting-interval", 5000, "interval in ms at which to report progress (accepted)")
	f.StringArrayVar(&o.Properties, "property", nil, "a producer property k=v")
	f.BoolVar(&o.Sync, "sync", false, "send each record synchronously")
	root.AddCommand(cmd)
}
