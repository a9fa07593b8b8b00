package clientutil

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// WithSignals runs main with a context that SIGINT or SIGTERM cancels, as
// the tools' JVM shutdown hooks: main then finishes its shutdown (flush,
// leave the group, the closing events) and the exit status is the JVM's
// after a hook ran, 128+signal, unless main failed. A second signal exits
// at once with that status.
func WithSignals(ctx context.Context, main func(context.Context) int) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan syscall.Signal, 1)
	done := make(chan struct{})
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
	code := main(ctx)
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
