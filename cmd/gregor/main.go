// Command gregor is the one Gregor binary: the broker (`gregor server
// server.properties`) and the Kafka-style tools as subcommands, with the
// flags of Kafka's scripts (bin/kafka-*.sh wrappers call them).
//
// Each subcommand lives in its own file (cmd_<name>.go) that adds itself to
// root in init(); the tool logic lives in packages under cmd/internal/.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

var root = &cobra.Command{
	Use:           "gregor",
	Short:         "Gregor: a Kafka-compatible commit log broker and its tools",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
