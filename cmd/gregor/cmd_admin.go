package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"gregor/cmd/internal/admin"
)

// gregor admin: the admin listener's fault injection, tracing and actor
// tree from the command line.
func init() {
	var adminURL string
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Talk to a broker's admin listener (admin.listener): fault, trace, actors",
	}
	cmd.PersistentFlags().StringVar(&adminURL, "admin-url", "http://127.0.0.1:9644", "the broker's admin listener (admin.listener)")
	client := func() *admin.Client { return &admin.Client{URL: adminURL} }

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
			ctx, cancel := context.WithTimeout(cmd.Context(), admin.DefaultTimeout)
			defer cancel()
			resp, err := client().Fault(ctx, f)
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

	var q admin.TraceQuery
	var kinds string
	trace := &cobra.Command{
		Use:     "trace",
		Short:   "Stream actor-level trace events (JSON lines) until interrupted, --limit or --seconds",
		Example: `  gregor admin trace --kind partition --topic orders`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kinds != "" {
				q.Kinds = strings.Split(kinds, ",")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return client().Trace(ctx, q, cmd.OutOrStdout())
		},
	}
	trace.Flags().StringVar(&kinds, "kind", "", "actor kinds to trace, comma-separated (partition, fetcher, group, request, …); empty = all")
	trace.Flags().StringVar(&q.Topic, "topic", "", "only partition actors (and requests) of this topic")
	trace.Flags().StringVar(&q.Actor, "actor", "", "only this actor path")
	trace.Flags().IntVar(&q.Limit, "limit", 0, "stop after this many events")
	trace.Flags().Float64Var(&q.Seconds, "seconds", 0, "stop after this many seconds")

	var asJSON bool
	var actorKind string
	actorsCmd := &cobra.Command{
		Use:   "actors",
		Short: "List the live actor tree (path, kind, restarts, mailbox depth)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), admin.DefaultTimeout)
			defer cancel()
			list, err := client().Actors(ctx, actorKind)
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
