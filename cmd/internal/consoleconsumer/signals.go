package consoleconsumer

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
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
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	got := make(chan syscall.Signal, 1) // the first signal, if any
	done := make(chan struct{})         // Main returned
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		select {
		case s := <-sigs:
			got <- s.(syscall.Signal)
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	code := Main(ctx, o, stdout, stderr)
	close(done)
	<-watcherDone
	select {
	case s := <-got:
		if code == 0 {
			return 128 + int(s)
		}
	default:
	}
	return code
}
