package main

import (
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/clientutil"
	"gregor/cmd/internal/consoleproducer"
)

// `gregor console-producer` = kafka-console-producer.sh.
func init() {
	var o consoleproducer.Options
	var brokerList, codec, acks string
	var batchSize, timeout, retries, retryBackoff, requestTimeout, maxMemory int64
	cmd := &cobra.Command{
		Use:   "console-producer",
		Short: "Read lines from stdin and produce each as a record (kafka-console-producer.sh)",
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			// Kafka's --compression-codec takes an optional value: a bare
			// flag means gzip, and "--compression-codec snappy" (space
			// separated) names the codec, which pflag leaves as an argument.
			if f.Changed("compression-codec") && codec == "gzip" {
				if c, rest, ok := consoleproducer.BareCodecValue(os.Args[2:], args); ok {
					codec, args = c, rest
				}
			}
			if len(args) > 0 {
				os.Exit(clientutil.Report(os.Stderr, "ERROR ", clientutil.Usage("unexpected arguments %q", args)))
			}
			if o.BootstrapServer == "" {
				o.BootstrapServer = brokerList
			}
			o.FlagProps = map[string]string{}
			for flag, prop := range map[string]string{"compression-codec": "compression.type", "request-required-acks": "acks",
				"batch-size": "batch.size", "timeout": "linger.ms", "message-send-max-retries": "retries",
				"retry-backoff-ms": "retry.backoff.ms", "request-timeout-ms": "request.timeout.ms", "max-memory-bytes": "buffer.memory",
				"max-partition-memory-bytes": "batch.size"} {
				if f.Changed(flag) {
					o.FlagProps[prop] = f.Lookup(flag).Value.String()
				}
			}
			if f.Changed("compression-codec") {
				o.FlagProps["compression.type"] = codec
			}
			if code := consoleproducer.Main(cmd.Context(), o, os.Stdin, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED unless --broker-list: the server(s) to connect to, host:port[,host:port]")
	f.StringVar(&brokerList, "broker-list", "", "DEPRECATED, use --bootstrap-server")
	f.StringVar(&o.ZooKeeper, "zookeeper", "", "not supported yet; use --bootstrap-server")
	f.StringVar(&o.Topic, "topic", "", "REQUIRED: the topic to produce to")
	f.StringArrayVar(&o.Properties, "property", nil, "line reader property: parse.key, key.separator, parse.headers, headers.delimiter, headers.separator, headers.key.separator, ignore.error, null.marker")
	f.StringArrayVar(&o.ProducerProps, "producer-property", nil, "producer property k=v (acks, linger.ms, batch.size, compression.type, client.id…)")
	f.StringVar(&o.ProducerConfig, "producer.config", "", "producer properties file")
	f.BoolVar(&o.Sync, "sync", false, "send each record synchronously")
	f.StringVar(&codec, "compression-codec", "none", "none, gzip, snappy, lz4 or zstd; without a value: gzip")
	f.Lookup("compression-codec").NoOptDefVal = "gzip"
	f.StringVar(&acks, "request-required-acks", consoleproducer.DefaultProps["acks"], "acks: -1 (all), 1 or 0")
	def := func(k string) int64 { n, _ := strconv.ParseInt(consoleproducer.DefaultProps[k], 10, 64); return n }
	f.Int64Var(&batchSize, "batch-size", def("batch.size"), "batch.size in bytes: the batching target (a larger record still goes alone; max.request.size is the limit)")
	f.Int64Var(&batchSize, "max-partition-memory-bytes", def("batch.size"), "batch.size in bytes (as --batch-size)")
	f.Int64Var(&timeout, "timeout", def("linger.ms"), "linger.ms: how long to wait for a batch to fill")
	f.Int64Var(&retries, "message-send-max-retries", def("retries"), "retries per record")
	f.Int64Var(&retryBackoff, "retry-backoff-ms", def("retry.backoff.ms"), "backoff between retries")
	f.Int64Var(&requestTimeout, "request-timeout-ms", def("request.timeout.ms"), "produce request timeout")
	f.Int64Var(&maxMemory, "max-memory-bytes", 32<<20, "buffer.memory")
	root.AddCommand(cmd)
}
