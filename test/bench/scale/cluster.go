package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"gregor/test/zkharness"
)

// clusterSize is the number of brokers on ZooKeeper (issue 13: three).
const clusterSize = 3

type cluster struct {
	o  opts
	l  layout
	mu sync.Mutex // guards zk and nodes' membership, which an interrupt's close reads
	zk *zkharness.Server
	// nodes is written only while starting (add); read without mu after.
	nodes map[int32]*node
}

func (c *cluster) add(n *node) {
	c.mu.Lock()
	c.nodes[n.id] = n
	c.mu.Unlock()
}

func (c *cluster) seeds(except int32) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(c.nodes)) {
		if n := c.nodes[id]; id != except && n.running() {
			out = append(out, n.addr())
		}
	}
	return out
}

// close stops the brokers (SIGTERM) and kills ZooKeeper.
func (c *cluster) close() { c.end((*node).stop) }

// kill kills the brokers and ZooKeeper (an interrupted run).
func (c *cluster) kill() { c.end((*node).kill) }

func (c *cluster) end(stop func(*node)) {
	c.mu.Lock()
	nodes := slices.Collect(maps.Values(c.nodes))
	zk := c.zk
	c.mu.Unlock()
	for _, n := range nodes {
		stop(n)
	}
	if zk != nil {
		_ = zk.Kill()
	}
}

func runCluster(o opts) error {
	fmt.Printf("cluster  %d brokers on ZooKeeper (tickTime %v), zookeeper.session.timeout.ms=%d, %d partitions replication factor %d\n",
		clusterSize, o.zkTick, o.sessionTimeout.Milliseconds(), o.clusterPartitions, clusterSize)
	if err := zkharness.Available(); err != nil {
		return err
	}
	c := &cluster{o: o, nodes: map[int32]*node{}, l: layout{prefix: "scale", total: o.clusterPartitions, perTopic: o.perTopic}}
	defer c.close()
	defer onInterrupt(c.kill)()
	zk, err := zkharness.New(filepath.Join(o.tmp, "zk"), zkharness.Options{TickTime: o.zkTick})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.zk = zk // before Start: a kill during start-up must reach it
	c.mu.Unlock()
	if err := zk.Start(); err != nil {
		return err
	}
	for id := int32(1); id <= clusterSize; id++ {
		// The properties the cluster tests give their brokers
		// (test/cluster), with Kafka's defaults elsewhere.
		n, err := newNode(o.gregor, o.config, filepath.Join(o.tmp, fmt.Sprintf("broker-%d", id)), id, map[string]string{
			"broker.id":                        strconv.Itoa(int(id)),
			"zookeeper.connect":                zk.Addr() + "/gregor",
			"zookeeper.session.timeout.ms":     strconv.FormatInt(o.sessionTimeout.Milliseconds(), 10),
			"default.replication.factor":       strconv.Itoa(clusterSize),
			"offsets.topic.replication.factor": strconv.Itoa(clusterSize),
			"num.partitions":                   "3",
		})
		if err != nil {
			return err
		}
		c.add(n)
		if err := n.start(); err != nil {
			return err
		}
	}
	for _, n := range c.nodes {
		if err := n.proc.WaitKafka(n.addr(), 60*time.Second); err != nil {
			return fmt.Errorf("broker %d: %w; log: %s", n.id, err, n.logTail(5))
		}
	}
	cl, err := newClient(c.seeds(-1))
	if err != nil {
		return err
	}
	defer func() { cl.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	st, err := waitUntil(ctx, cl, c.l, -1, func(s ledState) bool { return s.brokers == clusterSize && s.controller >= 0 })
	cancel()
	if err != nil {
		return fmt.Errorf("brokers registered: %d of %d after 60s", st.brokers, clusterSize)
	}
	for _, id := range slices.Sorted(maps.Keys(c.nodes)) {
		_, _, desc := c.nodes[id].limits()
		info("cluster", fmt.Sprintf("broker %d empty", id), desc)
	}

	// Creation.
	step := newStep(o.bound(barCreateCluster))
	for _, n := range c.nodes {
		step.watch(n)
	}
	var prof <-chan error
	profPath := filepath.Join(o.profileDir, "cluster-create-controller.pprof")
	if o.profileDir != "" {
		prof = c.nodes[st.controller].profile(min(o.profileSeconds, int(o.bound(barCreateCluster)/time.Second)), profPath)
	}
	err = createTopics(step.ctx, cl, c.l, clusterSize, o.batch)
	answered := step.elapsed()
	if err == nil {
		st, err = waitLed(step.ctx, cl, c.l, -1)
	}
	err = step.err(err)
	figure("cluster", fmt.Sprintf("%d partitions RF %d created and led", c.l.total, clusterSize), step.elapsed(), barCreateCluster, err,
		fmt.Sprintf("(CreateTopics answered at %.2f s) %s", answered.Seconds(), ledDetail(st, c.l.total, step.began)))
	step.done()
	if prof != nil {
		if perr := <-prof; perr != nil {
			fmt.Printf("cluster  CPU profile: %v\n", perr)
		} else {
			fmt.Printf("cluster  CPU profile of the controller (broker %d) during creation (first %d s): %s\n", st.controller, o.profileSeconds, profPath)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.nodes)) {
		if n := c.nodes[id]; n.running() {
			_, _, desc := n.limits()
			info("cluster", fmt.Sprintf("broker %d after creation", id), fmt.Sprintf("leads %d; %s", st.byLeader[id], desc))
		} else {
			info("cluster", fmt.Sprintf("broker %d after creation", id), "exited; log: "+n.logTail(3))
		}
	}
	if err != nil {
		return fmt.Errorf("creation did not finish; the failover figures need every partition led")
	}

	// Controlled shutdown of a broker that is not the controller.
	victim := int32(-1)
	for _, id := range slices.Sorted(maps.Keys(c.nodes)) {
		if id != st.controller {
			victim = id
			break
		}
	}
	c.controlledShutdown(victim, st.byLeader[victim])

	// Back to three brokers with full ISRs before the controller is killed.
	n := c.nodes[victim]
	rejoin := newStep(2 * time.Minute)
	if err := n.start(); err != nil {
		rejoin.done()
		return err
	}
	cl.Close()
	if cl, err = newClient(c.seeds(-1)); err != nil {
		rejoin.done()
		return err
	}
	st, err = waitUntil(rejoin.ctx, cl, c.l, -1, func(s ledState) bool {
		return s.brokers == clusterSize && s.led == c.l.total && s.fullISR == c.l.total
	})
	info("cluster", fmt.Sprintf("broker %d restarted, back in every ISR", victim), fmt.Sprintf("%.2f s (no bar; %d of %d ISRs full%s)",
		rejoin.elapsed().Seconds(), st.fullISR, c.l.total, errSuffix(rejoin.err(err))))
	rejoin.done()

	c.killController(st.controller)
	return nil
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return "; not done: " + err.Error()
}

// controlledShutdown sends SIGTERM to broker id and times its exit and
// the moment Metadata (from the others) shows it leading nothing.
func (c *cluster) controlledShutdown(id int32, leads int) {
	n := c.nodes[id]
	cl, err := newClient(c.seeds(id))
	if err != nil {
		fmt.Printf("cluster  controlled shutdown: %v\n", err)
		return
	}
	defer cl.Close()
	step := newStep(c.o.bound(barControlled))
	defer step.done()
	exited := n.proc.Signal(syscall.SIGTERM, c.o.bound(barControlled))
	exit := step.elapsed()
	var exitErr error
	if !exited {
		n.proc.Kill()
		exitErr = fmt.Errorf("no exit on SIGTERM within %v (killed)", c.o.bound(barControlled))
	} else if code := n.proc.Cmd.ProcessState.ExitCode(); code != 0 {
		exitErr = fmt.Errorf("exit status %d; log: %s", code, n.logTail(3))
	}
	figure("cluster", fmt.Sprintf("SIGTERM of broker %d (led %d) until it exited", id, leads), exit, barControlled, exitErr, "")
	st, err := waitUntil(step.ctx, cl, c.l, id, func(s ledState) bool { return s.byLeader[id] == 0 && s.led == c.l.total })
	figure("cluster", fmt.Sprintf("  … until Metadata shows broker %d leading nothing", id), step.elapsed(), barControlled, step.err(err),
		fmt.Sprintf("(%d of %d led by the others)", st.led, c.l.total))
}

// killController kills broker id (the controller) with SIGKILL and times
// until every partition is led by a live broker again.
func (c *cluster) killController(id int32) {
	bar := c.o.sessionTimeout + barFailoverExtra
	cl, err := newClient(c.seeds(id))
	if err != nil {
		fmt.Printf("cluster  controller kill: %v\n", err)
		return
	}
	defer cl.Close()
	// Who leads what, from the survivors, before the kill.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	before, _ := led(ctx, cl, c.l, -1)
	cancel()
	step := newStep(c.o.bound(bar))
	defer step.done()
	c.nodes[id].proc.Kill()
	st, err := waitLed(step.ctx, cl, c.l, id)
	figure("cluster", fmt.Sprintf("kill -9 of the controller (broker %d, led %d) until all led", id, before.byLeader[id]), step.elapsed(), bar, step.err(err),
		fmt.Sprintf("(zookeeper.session.timeout.ms=%d + 5 s) %s", c.o.sessionTimeout.Milliseconds(), ledDetail(st, c.l.total, step.began)))
}
