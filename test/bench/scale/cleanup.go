package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Processes started must not outlive the run, also when it is
// interrupted: ZooKeeper runs in its own process group (zkharness), so a
// terminal's ^C does not reach it. onInterrupt registers a stop that an
// interrupt runs; the returned func unregisters it (the normal path stops
// the process itself).
var (
	cleanupMu sync.Mutex
	cleanups  = map[int]func(){}
	cleanupID int
)

func onInterrupt(f func()) (unregister func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanupID++
	id := cleanupID
	cleanups[id] = f
	return func() {
		cleanupMu.Lock()
		delete(cleanups, id)
		cleanupMu.Unlock()
	}
}

// stopOnInterrupt runs every registered stop on SIGINT or SIGTERM, then
// exits with status 130.
func stopOnInterrupt() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-ch
		fmt.Fprintf(os.Stderr, "scale: %v: killing the brokers and ZooKeeper\n", sig)
		cleanupMu.Lock()
		fs := make([]func(), 0, len(cleanups))
		for _, f := range cleanups {
			fs = append(fs, f)
		}
		cleanupMu.Unlock()
		for _, f := range fs {
			f()
		}
		os.Exit(130)
	}()
}
