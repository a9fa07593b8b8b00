package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"gregor/cmd/internal/transactions"
)

// `gregor transactions` = kafka-transactions.sh. The sub-commands' options
// are taken as text and converted by the transactions package, so a bad
// value or a missing option is reported in Kafka's (argparse4j's) words;
// --bootstrap-server and --command-config go before the sub-command as in
// Kafka, and are accepted after it too.
func init() {
	var o transactions.Options
	// exit runs the tool and exits with its status when it is not 0.
	exit := func(cmd *cobra.Command) error {
		if code := transactions.Main(cmd.Context(), o, os.Stdout, os.Stderr); code != 0 {
			return errPrinted(code)
		}
		return nil
	}
	usageErr := func(command string) func(*cobra.Command, error) error {
		return func(_ *cobra.Command, err error) error {
			return errPrinted(transactions.PrintUsageError(os.Stderr, transactions.FlagError(command, err)))
		}
	}
	parent := &cobra.Command{
		Use:   "transactions",
		Short: "List, describe, find hanging and abort transactions (kafka-transactions.sh)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				o.Command = args[0] // not a sub-command: Main reports the invalid choice
			}
			return exit(cmd)
		},
	}
	parent.SetFlagErrorFunc(usageErr(""))
	pf := parent.PersistentFlags()
	pf.StringVar(&o.BootstrapServer, "bootstrap-server", "", "REQUIRED: the broker(s) to connect to, host:port[,host:port]")
	pf.StringVar(&o.CommandConfig, "command-config", "", "admin client properties file")
	for _, c := range transactions.Commands {
		values := map[string]*string{}
		sub := &cobra.Command{
			Use:   c.Name,
			Short: c.Help,
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o.Command = c.Name
				o.Flags = map[string]string{}
				cmd.Flags().Visit(func(f *pflag.Flag) {
					if v, ok := values[f.Name]; ok {
						o.Flags[f.Name] = *v
					}
				})
				return exit(cmd)
			},
		}
		sub.SetFlagErrorFunc(usageErr(c.Name))
		for _, f := range c.Flags {
			help := f.Help
			if f.Required {
				help = "REQUIRED: " + help
			}
			values[f.Name] = sub.Flags().String(f.Name, f.Default, help)
		}
		parent.AddCommand(sub)
	}
	root.AddCommand(parent)
}
