package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// pendingTools are subcommands that bin/ wrappers already call but that
// are not written yet (the cluster tools). Each gets a hidden placeholder
// that fails with one clear line instead of cobra's "unknown command";
// a real command registered under the same name replaces it.
var pendingTools = map[string]string{
	"reassign-partitions":        "kafka-reassign-partitions.sh",
	"preferred-replica-election": "kafka-preferred-replica-election.sh",
	"leader-election":            "kafka-leader-election.sh",
}

// addPending registers the placeholders whose names no init() took. It
// runs from main, after every cmd_*.go init, so file order does not matter.
func addPending() {
	taken := map[string]bool{}
	for _, c := range root.Commands() {
		taken[c.Name()] = true
	}
	for name, script := range pendingTools {
		if taken[name] {
			continue
		}
		name, script := name, script
		root.AddCommand(&cobra.Command{
			Use:                name,
			Short:              script + " (not implemented yet)",
			Hidden:             true,
			DisableFlagParsing: true, // any flags: the answer is the same
			RunE: func(*cobra.Command, []string) error {
				return fmt.Errorf("%s (gregor %s) is not implemented yet", script, name)
			},
		})
	}
}
