// Command scale is `make bench-scale`: the figures of issue 13 (scale:
// tens of thousands of partitions per broker), each against its bar with
// PASS/FAIL, for whatever gregor binary it is given.
//
// Zero-config single node (single.go): a fresh data dir and the repo's
// config/server.properties overlaid with free ports and that dir;
// -partitions partitions (topics of -per-topic partitions, created with
// kadm in CreateTopics requests of -batch topics) until Metadata reports
// every one led; a clean restart (SIGTERM, start, all led again); a kill
// -9 restart; the median latency of a full Metadata request (all topics);
// one acks=all record to every partition; the broker's RSS per idle
// partition and its open descriptors.
//
// Three brokers on ZooKeeper (cluster.go; ZooKeeper from test/zkharness):
// -cluster-partitions partitions of replication factor 3 created and led;
// SIGTERM of a broker that is not the controller (it leads about a
// third: a controlled shutdown) until it exits and leads nothing in
// Metadata; kill -9 of the controller until every partition is led again
// by a live broker, against zookeeper.session.timeout.ms + 5 s.
//
// -steps runs the single-node creation, a clean restart and the Metadata
// latency at 1k, 5k, 10k and 20k partitions and prints partitions →
// seconds, the model of how each step grows.
//
// Every step is bounded: one that reaches -bound-factor × its bar is
// reported FAIL with how far it got and the run moves on. Every process
// started is stopped at the end. The children inherit this process's
// RLIMIT_NOFILE raised to its hard limit; the limit each broker runs with
// is printed.
//
//	go run ./test/bench/scale -gregor ./gregor
//	go run ./test/bench/scale -gregor ./gregor -single -partitions 2000
//	go run ./test/bench/scale -gregor ./gregor -steps -profile-dir /tmp/prof
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gregor/test/bench/benchproc"
)

// The bars of issue 13, point 4.
const (
	barCreateSingle  = 30 * time.Second
	barRestartClean  = 15 * time.Second
	barRestartKill   = 30 * time.Second
	barMetadata      = 50 * time.Millisecond
	barCreateCluster = 60 * time.Second
	barControlled    = 3 * time.Second
	barFailoverExtra = 5 * time.Second // beyond zookeeper.session.timeout.ms
)

type opts struct {
	gregor, config    string
	partitions        int
	clusterPartitions int
	perTopic, batch   int
	single, cluster   bool
	steps             bool
	boundFactor       float64
	metadataRuns      int
	produceBound      time.Duration
	sessionTimeout    time.Duration
	profileDir, keep  string
	tmp               string
	profileSeconds    int
	zkTick            time.Duration
}

func main() {
	var o opts
	flag.StringVar(&o.gregor, "gregor", "./gregor", "gregor binary to measure")
	flag.StringVar(&o.config, "config", "config/server.properties", "base server.properties (listeners, log.dirs and admin.listener are overlaid)")
	flag.IntVar(&o.partitions, "partitions", 20000, "single node: partitions to create")
	flag.IntVar(&o.clusterPartitions, "cluster-partitions", 10000, "3 brokers: partitions (replication factor 3) to create")
	flag.IntVar(&o.perTopic, "per-topic", 100, "partitions per topic")
	flag.IntVar(&o.batch, "batch", 10, "topics per CreateTopics request")
	flag.BoolVar(&o.single, "single", false, "run the single-node part only")
	flag.BoolVar(&o.cluster, "cluster", false, "run the 3-broker part only")
	flag.BoolVar(&o.steps, "steps", false, "run the single-node model: create, restart and Metadata at 1k, 5k, 10k, 20k partitions")
	flag.Float64Var(&o.boundFactor, "bound-factor", 3, "a step is abandoned (FAIL) at this many times its bar")
	flag.IntVar(&o.metadataRuns, "metadata-runs", 7, "full Metadata requests timed (median reported)")
	flag.DurationVar(&o.produceBound, "produce-bound", 2*time.Minute, "bound of the one-record-per-partition acks=all produce (no bar)")
	flag.DurationVar(&o.sessionTimeout, "zk-session-timeout", 18*time.Second, "the brokers' zookeeper.session.timeout.ms (Kafka's default 18 s)")
	flag.StringVar(&o.profileDir, "profile-dir", "", "if set, a CPU profile of the broker (the controller on ZooKeeper) during creation is written here, from its admin listener's /debug/pprof/profile")
	flag.IntVar(&o.profileSeconds, "profile-seconds", 20, "length of each -profile-dir CPU profile, from the start of creation (seconds)")
	flag.StringVar(&o.keep, "keep", "", "if set, data dirs and broker logs go here and are kept (default: a temporary dir, removed)")
	flag.Parse()
	if err := check(&o); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(2)
	}
	stopOnInterrupt()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func check(o *opts) error {
	switch {
	case o.partitions < 1 || o.clusterPartitions < 1:
		return fmt.Errorf("-partitions and -cluster-partitions must be at least 1")
	case o.perTopic < 1 || o.batch < 1:
		return fmt.Errorf("-per-topic and -batch must be at least 1")
	case o.boundFactor < 1:
		return fmt.Errorf("-bound-factor must be at least 1")
	case o.profileSeconds < 1:
		return fmt.Errorf("-profile-seconds must be at least 1")
	case o.metadataRuns < 1:
		return fmt.Errorf("-metadata-runs must be at least 1")
	case o.sessionTimeout < 6*time.Second || o.sessionTimeout > 40*time.Second:
		// ZooKeeper (tickTime 2 s here) grants 4 s to 40 s; Kafka's
		// floor of the value is 6 s in practice.
		return fmt.Errorf("-zk-session-timeout must be between 6s and 40s (ZooKeeper runs with tickTime 2s and grants 4s–40s)")
	case o.steps && (o.single || o.cluster):
		return fmt.Errorf("-steps runs on its own: drop -single/-cluster")
	}
	if o.single && o.cluster {
		o.single, o.cluster = false, false // both: the default
	}
	if !o.single && !o.cluster && !o.steps {
		o.single, o.cluster = true, true
	}
	o.zkTick = 2 * time.Second
	if _, err := os.Stat(o.gregor); err != nil {
		return fmt.Errorf("-gregor: %w", err)
	}
	if _, err := os.Stat(o.config); err != nil {
		return fmt.Errorf("-config: %w", err)
	}
	return nil
}

func run(o opts) error {
	lim, err := benchproc.RaiseNoFile()
	if err != nil {
		return fmt.Errorf("raise RLIMIT_NOFILE: %w", err)
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}
	if o.keep != "" {
		// Every broker starts on a fresh data dir: a kept dir from an
		// earlier run would be reused, not measured afresh.
		if ents, err := os.ReadDir(o.keep); err == nil && len(ents) > 0 {
			return fmt.Errorf("-keep %s: not empty (each run needs fresh data dirs)", o.keep)
		}
		o.tmp = o.keep
		if err := os.MkdirAll(o.tmp, 0o755); err != nil {
			return err
		}
	} else {
		if o.tmp, err = os.MkdirTemp("", "gregor-scale-"); err != nil {
			return err
		}
		defer os.RemoveAll(o.tmp)
	}
	if o.gregor, err = filepath.Abs(o.gregor); err != nil {
		return err
	}
	fmt.Printf("gregor %s; RLIMIT_NOFILE raised to the hard limit %d for the brokers; bound of each step: %.0f× its bar\n",
		o.gregor, lim, o.boundFactor)
	if o.steps {
		return runSteps(o)
	}
	if o.single {
		if err := runSingle(o); err != nil {
			fmt.Printf("single   aborted: %v\n", err)
		}
	}
	if o.cluster {
		if err := runCluster(o); err != nil {
			fmt.Printf("cluster  aborted: %v\n", err)
		}
	}
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func (o opts) bound(bar time.Duration) time.Duration {
	return time.Duration(float64(bar) * o.boundFactor)
}

// figure prints one timed figure against its bar. err (a step that did
// not finish: bound reached, broker gone) makes it FAIL with how far it
// got (detail).
func figure(part, name string, d, bar time.Duration, err error, detail string) {
	v := verdict(err == nil && d <= bar)
	val := fmt.Sprintf("%8.2f s", d.Seconds())
	barS := fmt.Sprintf("%v", bar)
	if bar < time.Second {
		val = fmt.Sprintf("%8.2f ms", float64(d)/float64(time.Millisecond))
	}
	line := fmt.Sprintf("%-8s %-52s %s  (bar <= %s %s)", part, name, val, barS, v)
	if err != nil {
		line += fmt.Sprintf("  not done: %v", err)
	}
	if detail != "" {
		line += "  " + detail
	}
	fmt.Println(line)
}

// info prints a figure that has no bar.
func info(part, name, value string) {
	fmt.Printf("%-8s %-52s %s\n", part, name, value)
}
