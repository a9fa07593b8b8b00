// Command gregor is the one Gregor binary: the broker (`gregor server
// server.properties`) and the Kafka-style tools as subcommands, with the
// flags of Kafka's scripts (bin/kafka-*.sh wrappers call them).
//
// Each subcommand lives in its own file (cmd_<name>.go) that adds itself to
// root in init(); the tool logic lives in packages under cmd/internal/.
package main

import (
	"errors"
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

// errPrinted is returned by a subcommand whose tool has already printed
// its error on stderr: main exits with this status without printing
// anything more, so every error is printed exactly once.
type errPrinted int

func (e errPrinted) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func main() {
	if err := root.Execute(); err != nil {
		var printed errPrinted
		if errors.As(err, &printed) {
			os.Exit(int(printed))
		}
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
