package consumergroups

import (
	"context"
	"fmt"
	"io"
	"time"

	"gregor/cmd/internal/clientutil"
)

// ResetWithoutExecuteWarning is what Kafka's ConsumerGroupCommandOptions
// prints on stderr for --reset-offsets with neither --dry-run nor
// --execute (the plan is then only shown). Kafka's two concatenated
// literals have no space after "missing.", and neither has this.
const ResetWithoutExecuteWarning = "WARN: No action will be performed as the --execute option is missing." +
	"In a future major release, the default behavior of this command will be to prompt the user before " +
	"executing the reset rather than doing a dry run. You should add the --dry-run option explicitly " +
	"if you are scripting this command and want to keep the current default behavior without prompting."

// Timeout bounds one command (connecting included), like the admin client's
// default.api.timeout.ms.
var Timeout = 60 * time.Second

// Main runs kafka-consumer-groups.sh with parsed options and returns the
// exit status: 0 on success, 1 with one "Error: …" line on stderr. As in
// Kafka, what its printError reports goes to stdout and the status is
// still 0: groups --delete could not delete, a group --describe finds
// does not exist, a group --reset-offsets may not reset (not inactive).
// commandConfig holds --command-config client properties (may be nil).
func Main(ctx context.Context, o Options, commandConfig map[string]string, stdout, stderr io.Writer) int {
	// Kafka's checkArgs warns before it checks the rest of the options.
	if o.ResetOffsets && !o.DryRun && !o.Execute && o.BootstrapServer != "" {
		fmt.Fprintln(stderr, ResetWithoutExecuteWarning)
	}
	if err := o.Check(); err != nil {
		return clientutil.Report(stderr, "Error: ", clientutil.Usage("%v", err))
	}
	adm, err := clientutil.AdminClient(o.BootstrapServer, commandConfig)
	if err != nil {
		return clientutil.Report(stderr, "Error: ", err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return clientutil.Report(stderr, "Error: ", Run(ctx, o, adm, stdout, stderr))
}
