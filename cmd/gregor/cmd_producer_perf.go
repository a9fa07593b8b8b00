package main

// The file is not named cmd_producer_perf_test.go: Go would compile a
// *_test.go file only into tests, and the subcommand would vanish.

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/clientutil"
	"gregor/cmd/internal/perftest"
)

// `gregor producer-perf-test` = kafka-producer-perf-test.sh.
func init() {
	var o perftest.ProducerOptions
	var reportMs, txnMs int64
	cmd := &cobra.Command{
		Use:   "producer-perf-test",
		Short: "Produce records as fast as allowed and report throughput and latency (kafka-producer-perf-test.sh)",
		RunE: func(cmd *cobra.Command, args []string) error {
			// Kafka's --producer-props takes several space-separated
			// k=v values (argparse nargs='+'); pflag leaves all but the
			// first as arguments.
			for _, a := range args {
				if !strings.Contains(a, "=") {
					os.Exit(clientutil.Report(os.Stderr, "ERROR ", clientutil.Usage("unexpected argument %q", a)))
				}
				o.ProducerProps = append(o.ProducerProps, a)
			}
			if !cmd.Flags().Changed("throughput") {
				os.Exit(clientutil.Report(os.Stderr, "ERROR ", clientutil.Usage("Missing required argument \"[throughput]\"")))
			}
			o.ReportInterval = time.Duration(reportMs) * time.Millisecond
			if cmd.Flags().Changed("transaction-duration-ms") {
				o.TransactionDurationSet = true
				o.TransactionDuration = time.Duration(min(max(txnMs, 0), 1<<40)) * time.Millisecond
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if code := perftest.RunProducer(ctx, o, os.Stdout, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Topic, "topic", "", "REQUIRED: produce records to this topic")
	f.Int64Var(&o.NumRecords, "num-records", 0, "REQUIRED: number of records to produce")
	f.IntVar(&o.RecordSize, "record-size", 0, "record size in bytes (this or --payload-file)")
	f.StringVar(&o.PayloadFile, "payload-file", "", "file of payloads to send at random, split by --payload-delimiter")
	f.StringVar(&o.PayloadDelimiter, "payload-delimiter", "\n", "payload delimiter in --payload-file")
	f.Float64Var(&o.Throughput, "throughput", 0, "REQUIRED: throttle to about this many records/sec; -1 for no throttling")
	f.StringArrayVar(&o.ProducerProps, "producer-props", nil, "producer properties k=v [k=v ...] (bootstrap.servers, acks, linger.ms, batch.size, compression.type…)")
	f.StringVar(&o.ProducerConfig, "producer.config", "", "producer properties file")
	f.Bool("print-metrics", false, "accepted for compatibility; no client metrics are printed")
	f.BoolVar(&o.PrintLatencyMicros, "print-latency-us", false, "also print the latency percentiles in microseconds and, with transactions, the commit latencies (not in Kafka's tool)")
	f.StringVar(&o.TransactionalID, "transactional-id", "", "the transactional id to use (takes precedence over transactional.id in --producer-props or --producer.config); turns transactions on")
	f.Int64Var(&txnMs, "transaction-duration-ms", 0, "the max age of each transaction: commitTransaction is called after this time has elapsed (default 3000 when transactions are on); turns transactions on")
	f.Int64Var(&reportMs, "reporting-interval", 5000, "progress line period in ms (Kafka's is fixed at 5000)")
	root.AddCommand(cmd)
}
