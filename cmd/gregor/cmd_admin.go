package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/admin"
)

// gregor admin: the admin listener's fault injection, tracing and actor
// tree from the command line.
func init() {
	var adminURLs []string
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Talk to a broker's admin listener (admin.listener): fault, trace, actors",
	}
	cmd.PersistentFlags().StringSliceVar(&adminURLs, "admin-url", []string{"http://127.0.0.1:9644"},
		"the broker's admin listener (admin.listener); trace takes several (comma-separated or repeated) and merges them")
	var commandConfig string
	cmd.PersistentFlags().StringVar(&commandConfig, "command-config", "",
		"properties file for a protected admin listener: ssl.truststore.*, ssl.keystore.* (https:// URLs, client certificates) and auth.token.file (bearer token)")
	httpClient := func() (*http.Client, error) {
		props, err := commandConfigProps(commandConfig, "")
		if err != nil {
			return nil, err
		}
		return admin.HTTPClient(props)
	}
	// client is the one listener fault and actors talk to.
	client := func() (*admin.Client, error) {
		if len(adminURLs) != 1 {
			return nil, fmt.Errorf("this command takes exactly one --admin-url, got %d", len(adminURLs))
		}
		hc, err := httpClient()
		if err != nil {
			return nil, err
		}
		return &admin.Client{URL: adminURLs[0], HC: hc}, nil
	}

	var (
		actorPath, kind, api, errName string
		random                        bool
		count                         int
		ms                            int64
	)
	fault := &cobra.Command{
		Use:   "fault kill|stop|delay|drop|error",
		Short: "Inject a fault: kill/stop/delay an actor (--actor, --kind or --random), or drop/error/delay a request type (--request)",
		Example: `  gregor admin fault kill --actor replica-manager/orders-0
  gregor admin fault kill --kind fetcher --count 3
  gregor admin fault delay --random --ms 500
  gregor admin fault error --request Produce --error NOT_LEADER_OR_FOLLOWER --count 5
  gregor admin fault drop --request Fetch`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := admin.FaultRequest{Action: args[0], Actor: actorPath, Kind: kind, Random: random, Count: count, Ms: ms, Request: api, Error: errName}
			c, err := client()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), admin.DefaultTimeout)
			defer cancel()
			resp, err := c.Fault(ctx, f)
			if err != nil {
				return err
			}
			out, _ := json.Marshal(resp)
			fmt.Fprintln(cmd.OutOrStdout(), string(out))
			return nil
		},
	}
	fault.Flags().StringVar(&actorPath, "actor", "", "actor path, e.g. replica-manager/<topic>-<partition>")
	fault.Flags().StringVar(&kind, "kind", "", "a random live actor of this kind (partition, fetcher, group, …)")
	fault.Flags().BoolVar(&random, "random", false, "a random live actor")
	fault.Flags().IntVar(&count, "count", 1, "repeat the fault (request faults: how many requests it hits)")
	fault.Flags().Int64Var(&ms, "ms", 0, "delay in milliseconds (delay)")
	fault.Flags().StringVar(&api, "request", "", "request fault on this API (name like Produce, or key number)")
	fault.Flags().StringVar(&errName, "error", "", "Kafka error for an error request fault (name or code)")

	var (
		q       admin.TraceQuery
		kinds   string
		tro     admin.TraceOptions
		replayF string
	)
	trace := &cobra.Command{
		Use:   "trace",
		Short: "Stream actor-level trace events (JSON lines) from one or more brokers, merged in time order, until interrupted, --limit or --seconds",
		Long: `Stream actor-level trace events from the admin listener of every --admin-url at once,
merged in time order; each event carries the broker id ("broker") and the
listener it came from ("admin"). Events carry the partition, the offset ranges
of the record batches a message carried ("ranges") and a one-line "detail", so
an acks=all produce can be followed from the leader's connection through its
partition actor, each follower's fetcher and append, the follower fetches that
move the high watermark, to the reply. --follow-produce keeps just that chain
for the first produce seen.`,
		Example: `  gregor admin trace --kind partition --topic orders
  gregor admin trace --admin-url http://b1:9644,http://b2:9644,http://b3:9644 \
      --kind partition,fetcher --topic orders --follow-produce --format text
  gregor admin trace --replay trace.jsonl --follow-produce --format text`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kinds != "" {
				q.Kinds = strings.Split(kinds, ",")
			}
			switch tro.Format {
			case admin.FormatJSON, admin.FormatText:
			default:
				return fmt.Errorf("--format %q: want json or text", tro.Format)
			}
			tro.URLs, tro.Query, tro.Warn = adminURLs, q, cmd.ErrOrStderr()
			hc, err := httpClient()
			if err != nil {
				return err
			}
			tro.Client = &admin.Client{HC: hc}
			if replayF != "" {
				r := io.Reader(cmd.InOrStdin())
				if replayF != "-" {
					f, err := os.Open(replayF)
					if err != nil {
						return err
					}
					defer f.Close()
					r = f
				}
				tro.Replay = r
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return admin.TraceMerged(ctx, tro, cmd.OutOrStdout())
		},
	}
	trace.Flags().StringVar(&kinds, "kind", "", "actor kinds to trace, comma-separated (partition, fetcher, group, request, …); empty = all")
	trace.Flags().StringVar(&q.Topic, "topic", "", "only partition actors (and requests, fetch responses) of this topic")
	trace.Flags().StringVar(&q.Actor, "actor", "", "only this actor path")
	trace.Flags().IntVar(&q.Limit, "limit", 0, "stop after this many events")
	trace.Flags().Float64Var(&q.Seconds, "seconds", 0, "stop after this many seconds")
	trace.Flags().StringVar(&tro.Format, "format", admin.FormatJSON, "output: json (JSON lines) or text (one readable line per event)")
	trace.Flags().BoolVar(&tro.FollowProduce, "follow-produce", false, "print only the first appended produce, its replication and its reply, then stop")
	trace.Flags().DurationVar(&tro.Window, "merge-window", 300*time.Millisecond, "how long events are held back to merge the brokers' streams in time order")
	trace.Flags().StringVar(&replayF, "replay", "", "read events from this file of JSON lines (- = stdin) instead of the brokers")

	var asJSON bool
	var actorKind string
	actorsCmd := &cobra.Command{
		Use:   "actors",
		Short: "List the live actor tree (path, kind, restarts, mailbox depth)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := client()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), admin.DefaultTimeout)
			defer cancel()
			list, err := c.Actors(ctx, actorKind)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(list)
			}
			admin.PrintActors(cmd.OutOrStdout(), list)
			return nil
		},
	}
	actorsCmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	actorsCmd.Flags().StringVar(&actorKind, "kind", "", "only actors of this kind")

	cmd.AddCommand(fault, trace, actorsCmd)
	root.AddCommand(cmd)
}
