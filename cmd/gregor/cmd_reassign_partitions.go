package main

import (
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/reassign"
)

// `gregor reassign-partitions` = kafka-reassign-partitions.sh.
func init() {
	var o reassign.Options
	var commandConfig string
	cmd := &cobra.Command{
		Use:   "reassign-partitions",
		Short: "Move partitions between brokers (kafka-reassign-partitions.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			props, err := commandConfigProps(commandConfig, "")
			if err != nil {
				return err
			}
			if code := reassign.Main(cmd.Context(), o, props, os.Stdout, os.Stderr); code != 0 {
				return errPrinted(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "the server(s) to use for bootstrapping, host:port[,host:port]")
	f.StringVar(&o.ZooKeeper, "zookeeper", "", "DEPRECATED: the ZooKeeper connection string host:port[,host:port...][/chroot]")
	f.StringVar(&commandConfig, "command-config", "", "property file with Admin client configs")
	f.BoolVar(&o.Generate, "generate", false, "generate a candidate assignment for --topics-to-move-json-file over --broker-list")
	f.BoolVar(&o.Execute, "execute", false, "start the reassignment in --reassignment-json-file")
	f.BoolVar(&o.Verify, "verify", false, "report the status of the reassignment in --reassignment-json-file")
	f.BoolVar(&o.Cancel, "cancel", false, "cancel the active reassignments of --reassignment-json-file (--bootstrap-server only)")
	f.BoolVar(&o.List, "list", false, "list the active partition reassignments (--bootstrap-server only)")
	f.StringVar(&o.ReassignmentJSONFile, "reassignment-json-file", "", "the JSON file with the partition reassignment configuration")
	f.StringVar(&o.TopicsToMoveJSONFile, "topics-to-move-json-file", "", "JSON file of the topics to move: {\"topics\":[{\"topic\":\"foo\"}],\"version\":1}")
	f.StringVar(&o.BrokerList, "broker-list", "", "the brokers to reassign the partitions to, \"0,1,2\" (with --generate)")
	f.BoolVar(&o.DisableRackAware, "disable-rack-aware", false, "disable rack-aware replica assignment (assignment is rack-unaware)")
	f.Int64Var(&o.Throttle, "throttle", -1, "inter-broker replication throttle in B/s: sets leader/follower.replication.throttled.rate on the brokers of the moves and the topics' throttled replicas; --verify removes them")
	f.Int64Var(&o.ReplicaAlterLogDirsThrottle, "replica-alter-log-dirs-throttle", -1, "replica.alter.log.dirs.io.max.bytes.per.second on the brokers of log dir moves (--bootstrap-server only; Gregor has no log dir moves yet, the rate is held)")
	f.Int64Var(&o.TimeoutMs, "timeout", 10000, "ms to wait for log directory moves to start")
	f.BoolVar(&o.Additional, "additional", false, "execute in addition to the ongoing reassignments (--bootstrap-server only)")
	f.BoolVar(&o.PreserveThrottles, "preserve-throttles", false, "do not clear throttles on --verify or --cancel")
	root.AddCommand(cmd)
}
