package consoleconsumer

import (
	"context"
	"io"

	"gregor/cmd/internal/clientutil"
)

// MainWithSignals is Main for the process: SIGINT or SIGTERM ends the
// consumption as Kafka's ConsoleConsumer shutdown hook does — the records
// printed so far are committed (with a group), the client is closed, so a
// group member sends LeaveGroup and the group rebalances at once instead
// of waiting out session.timeout.ms, and "Processed a total of N messages"
// is printed. The exit status is then the JVM's after a shutdown hook ran,
// 128+signal (130 for SIGINT, 143 for SIGTERM), unless Main failed first.
// A second signal while shutting down exits at once with that status.
func MainWithSignals(ctx context.Context, o Options, stdout, stderr io.Writer) int {
	return clientutil.WithSignals(ctx, func(ctx context.Context) int { return Main(ctx, o, stdout, stderr) })
}
