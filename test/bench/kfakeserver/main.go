// Command kfakeserver runs franz-go's in-memory fake Kafka cluster
// (github.com/twmb/franz-go/pkg/kfake) as a process, so `make bench-compare`
// can measure it exactly like a Gregor broker: its own PID, its own CPU
// time in /proc, clients over loopback. It serves until SIGINT/SIGTERM.
//
//	kfakeserver -port 9092 -topics perf -partitions 3
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 9092, "port to listen on (127.0.0.1)")
	topics := flag.String("topics", "", "comma-separated topics to create at start")
	partitions := flag.Int("partitions", 3, "partitions of each seeded topic")
	flag.Parse()
	opts := []kfake.Opt{kfake.Ports(*port), kfake.NumBrokers(1)}
	if *topics != "" {
		opts = append(opts, kfake.SeedTopics(int32(*partitions), strings.Split(*topics, ",")...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfakeserver:", err)
		os.Exit(1)
	}
	fmt.Println("kfakeserver listening on", strings.Join(c.ListenAddrs(), ","))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	c.Close()
}
