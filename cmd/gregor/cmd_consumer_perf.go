package main

// Not named cmd_consumer_perf_test.go: a *_test.go file is compiled only
// into tests.

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/clientutil"
	"gregor/cmd/internal/perftest"
)

// `gregor consumer-perf-test` = kafka-consumer-perf-test.sh.
func init() {
	var o perftest.ConsumerOptions
	var brokerList string
	var timeoutMs, reportMs int64
	var fetchSize int32
	cmd := &cobra.Command{
		Use:   "consumer-perf-test",
		Short: "Consume records as fast as possible and report throughput (kafka-consumer-perf-test.sh)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				os.Exit(clientutil.Report(os.Stderr, "ERROR ", clientutil.Usage("unexpected arguments %q", args)))
			}
			if o.BootstrapServer == "" {
				o.BootstrapServer = brokerList
			}
			o.Timeout = time.Duration(timeoutMs) * time.Millisecond
			o.ReportingInterval = time.Duration(reportMs) * time.Millisecond
			o.FetchSize = fetchSize
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if code := perftest.RunConsumer(ctx, o, os.Stdout, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the server(s) to connect to, host:port[,host:port]")
	f.StringVar(&brokerList, "broker-list", "", "DEPRECATED, use --bootstrap-server")
	f.StringVar(&o.Topic, "topic", "", "REQUIRED: the topic to consume from")
	f.Int64Var(&o.Messages, "messages", 0, "REQUIRED: the number of messages to consume")
	f.StringVar(&o.Group, "group", "", "consumer group id; without it the tool assigns itself every partition (no group)")
	f.Int32Var(&fetchSize, "fetch-size", 1<<20, "max bytes per partition per fetch")
	f.BoolVar(&o.FromLatest, "from-latest", false, "start at the latest offset instead of the earliest")
	f.Int64Var(&timeoutMs, "timeout", 10000, "ms without a record before giving up")
	f.StringVar(&o.ConsumerConfig, "consumer.config", "", "consumer properties file")
	f.BoolVar(&o.HideHeader, "hide-header", false, "do not print the CSV header")
	f.BoolVar(&o.ShowDetailedStats, "show-detailed-stats", false, "print a row every --reporting-interval")
	f.Int64Var(&reportMs, "reporting-interval", 5000, "ms between detailed rows")
	f.Bool("print-metrics", false, "accepted for compatibility; no client metrics are printed")
	f.Int("threads", 1, "accepted for compatibility (one consumer)")
	f.Int("num-fetch-threads", 1, "accepted for compatibility")
	f.Int("socket-buffer-size", 2*1024*1024, "accepted for compatibility")
	f.String("date-format", "yyyy-MM-dd HH:mm:ss:SSS", "accepted for compatibility; the Kafka default format is used")
	root.AddCommand(cmd)
}
