package main

import (
	"os"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/consumergroups"
)

// `gregor consumer-groups` = kafka-consumer-groups.sh.
func init() {
	var o consumergroups.Options
	var toOffset, shiftBy int64
	var commandConfig string
	cmd := &cobra.Command{
		Use:   "consumer-groups",
		Short: "List, describe, delete consumer groups and reset their offsets (kafka-consumer-groups.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("to-offset") {
				o.ToOffset = &toOffset
			}
			if cmd.Flags().Changed("shift-by") {
				o.ShiftBy = &shiftBy
			}
			props, err := commandConfigProps(commandConfig, "Error: ")
			if err != nil {
				return err
			}
			if code := consumergroups.Main(cmd.Context(), o, props, os.Stdout, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the server(s) to connect to, host:port[,host:port]")
	f.StringVar(&commandConfig, "command-config", "", "client properties file")
	f.BoolVar(&o.List, "list", false, "list all consumer groups")
	f.BoolVar(&o.Describe, "describe", false, "describe consumer group(s): offsets and lag (default), --members or --state")
	f.BoolVar(&o.Delete, "delete", false, "delete consumer group(s) (they must have no active members)")
	f.BoolVar(&o.ResetOffsets, "reset-offsets", false, "reset the committed offsets of an inactive group (--dry-run by default, --execute to commit)")
	f.StringArrayVar(&o.Groups, "group", nil, "the consumer group (repeatable)")
	f.BoolVar(&o.AllGroups, "all-groups", false, "apply to all consumer groups")
	f.BoolVar(&o.Members, "members", false, "with --describe: the group's members")
	f.BoolVar(&o.Verbose, "verbose", false, "with --describe --members: each member's assignment")
	f.BoolVar(&o.State, "state", false, "with --describe: the group's state; with --list: each group's state")
	f.BoolVar(&o.Offsets, "offsets", false, "with --describe: offsets and lag (the default)")
	f.StringArrayVar(&o.Topics, "topic", nil, "with --reset-offsets or --delete-offsets: topic or topic:0,1,2 (repeatable)")
	f.BoolVar(&o.AllTopics, "all-topics", false, "with --reset-offsets: every topic the group has offsets for")
	f.BoolVar(&o.ToEarliest, "to-earliest", false, "reset to the earliest offset")
	f.BoolVar(&o.ToLatest, "to-latest", false, "reset to the latest offset")
	f.BoolVar(&o.ToCurrent, "to-current", false, "reset to the current offset")
	f.Int64Var(&toOffset, "to-offset", 0, "reset to this offset (clamped to the partition's range)")
	f.Int64Var(&shiftBy, "shift-by", 0, "shift the current offset by n (may be negative)")
	f.StringVar(&o.ToDatetime, "to-datetime", "", "reset to the first offset at or after yyyy-MM-ddTHH:mm:SS.sss[zone]")
	f.StringVar(&o.ByDuration, "by-duration", "", "reset to the first offset at or after now minus PnDTnHnMnS")
	f.BoolVar(&o.DryRun, "dry-run", false, "only show the new offsets (the default)")
	f.BoolVar(&o.Execute, "execute", false, "commit the new offsets")
	f.BoolVar(&o.Export, "export", false, "with --reset-offsets: print the plan as CSV (topic,partition,offset; with several groups group,topic,partition,offset)")
	f.StringVar(&o.FromFile, "from-file", "", "with --reset-offsets: reset to the offsets of a CSV file as --export writes it")
	f.BoolVar(&o.DeleteOffsets, "delete-offsets", false, "delete the offsets of one --group for the --topic partitions (topic or topic:0,1)")
	root.AddCommand(cmd)
}
