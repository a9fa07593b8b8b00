package main

import (
	"errors"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/dumplog"
)

// dump-log mirrors kafka-dump-log.sh (kafka.tools.DumpLogSegments).
func init() {
	var (
		opts  dumplog.Options
		files string
	)
	cmd := &cobra.Command{
		Use:   "dump-log --files A.log[,B.index,C.timeindex]",
		Short: "Print the record batches of segment files and the entries of their indexes",
		Long: "Dump Kafka-format segment files: batches of .log files (with --deep-iteration or\n" +
			"--print-data-log each record), entries of .index and .timeindex files checked\n" +
			"against their log. Exits non-zero if any damage was found.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, f := range strings.Split(files, ",") {
				if f = strings.TrimSpace(f); f != "" {
					opts.Files = append(opts.Files, f)
				}
			}
			err := dumplog.Run(os.Stdout, os.Stderr, opts)
			if err != nil && len(opts.Files) > 0 && !errors.Is(err, dumplog.ErrInvalid) {
				return errPrinted(1) // Run printed "Error dumping <file>: …"
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&files, "files", "", "REQUIRED: the comma separated list of data and index log files to be dumped")
	f.BoolVar(&opts.PrintDataLog, "print-data-log", false, "print the messages' content when dumping data logs (implies --deep-iteration)")
	f.BoolVar(&opts.DeepIteration, "deep-iteration", false, "print every record, not just every batch")
	f.BoolVar(&opts.OffsetsDecoder, "offsets-decoder", false, "decode __consumer_offsets keys and values (implies --print-data-log)")
	f.BoolVar(&opts.TransactionLogDecoder, "transaction-log-decoder", false, "decode __transaction_state keys and values (implies --print-data-log)")
	f.IntVar(&opts.MaxMessageSize, "max-message-size", dumplog.DefaultMaxMessageSize, "size of the largest batch, in bytes")
	_ = cmd.MarkFlagRequired("files")
	root.AddCommand(cmd)
}
