// Command compare is `make bench-compare`: Gregor against franz-go's kfake
// (in memory, run as its own process by test/bench/kfakeserver) on one
// machine, single broker, a 3-partition topic, 1 KiB records, acks=1,
// clients on loopback. Runs alternate A B A B; for each side it prints the
// median producer and consumer records/s and the broker's CPU seconds
// (utime+stime from /proc/<pid>/stat) per GB produced, then the ratios and
// the end-to-end produce latency (p99) at 10,000 records/s with acks=all.
//
// The clients are `gregor producer-perf-test` and `gregor
// consumer-perf-test`, run as processes; their output lines are parsed.
//
//	go run ./test/bench/compare -gregor ./gregor -kfake /tmp/kfakeserver
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type opts struct {
	gregor, kfake  string
	rounds         int
	records        int64
	size           int
	latencyRecords int64
	latencyRate    float64
	props          []string
}

func main() {
	var o opts
	var props string
	flag.StringVar(&o.gregor, "gregor", "./gregor", "gregor binary")
	flag.StringVar(&o.kfake, "kfake", "", "kfakeserver binary (test/bench/kfakeserver)")
	flag.IntVar(&o.rounds, "rounds", 3, "A/B rounds")
	flag.Int64Var(&o.records, "records", 300000, "records per throughput run")
	flag.IntVar(&o.size, "record-size", 1024, "record size in bytes")
	flag.Int64Var(&o.latencyRecords, "latency-records", 50000, "records in the acks=all latency run")
	flag.Float64Var(&o.latencyRate, "latency-rate", 10000, "records/s in the latency run")
	flag.StringVar(&props, "producer-props", "acks=1 linger.ms=5 batch.size=262144 compression.type=none", "producer properties for the throughput runs")
	flag.Parse()
	o.props = strings.Fields(props)
	if o.kfake == "" {
		fmt.Fprintln(os.Stderr, "compare: -kfake is required")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

type result struct {
	produceRate, produceMB, consumeRate, cpuPerGB float64
}

type side struct {
	name  string
	start func(port int, dir string) (*exec.Cmd, error)
}

func run(o opts) error {
	tmp, err := os.MkdirTemp("", "gregor-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	sides := []side{
		{"gregor", func(port int, dir string) (*exec.Cmd, error) {
			cfg := filepath.Join(dir, "server.properties")
			body := fmt.Sprintf("broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%d\nlog.dirs=%s\nnum.partitions=3\noffsets.topic.replication.factor=1\ngroup.initial.rebalance.delay.ms=0\n", port, filepath.Join(dir, "data"))
			if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
				return nil, err
			}
			return exec.Command(o.gregor, "server", cfg), nil
		}},
		{"kfake", func(port int, dir string) (*exec.Cmd, error) {
			return exec.Command(o.kfake, "-port", strconv.Itoa(port), "-topics", "perf", "-partitions", "3"), nil
		}},
	}
	res := map[string][]result{}
	for r := 1; r <= o.rounds; r++ {
		for _, s := range sides {
			x, err := throughput(o, s, filepath.Join(tmp, fmt.Sprintf("%s-%d", s.name, r)))
			if err != nil {
				return fmt.Errorf("%s round %d: %w", s.name, r, err)
			}
			fmt.Printf("round %d %-6s produce %9.0f records/s (%6.1f MB/s)  consume %9.0f records/s  broker CPU %6.2f s/GB\n",
				r, s.name, x.produceRate, x.produceMB, x.consumeRate, x.cpuPerGB)
			res[s.name] = append(res[s.name], x)
		}
	}
	med := map[string]result{}
	for _, s := range sides {
		rs := res[s.name]
		m := result{
			produceRate: median(rs, func(r result) float64 { return r.produceRate }),
			produceMB:   median(rs, func(r result) float64 { return r.produceMB }),
			consumeRate: median(rs, func(r result) float64 { return r.consumeRate }),
			cpuPerGB:    median(rs, func(r result) float64 { return r.cpuPerGB }),
		}
		med[s.name] = m
		fmt.Printf("median  %-6s produce %9.0f records/s (%6.1f MB/s)  consume %9.0f records/s  broker CPU %6.2f s/GB\n",
			s.name, m.produceRate, m.produceMB, m.consumeRate, m.cpuPerGB)
	}
	g, k := med["gregor"], med["kfake"]
	fmt.Printf("ratio gregor/kfake: produce %.2fx (bar >= 1.25)  consume %.2fx (bar >= 1.25)  CPU per GB %.2fx (bar <= 0.50)\n",
		g.produceRate/k.produceRate, g.consumeRate/k.consumeRate, g.cpuPerGB/k.cpuPerGB)
	for _, s := range sides {
		var p99s []float64
		for r := 1; r <= 2; r++ {
			p99, err := latency(o, s, filepath.Join(tmp, fmt.Sprintf("%s-lat-%d", s.name, r)))
			if err != nil {
				return fmt.Errorf("%s latency: %w", s.name, err)
			}
			p99s = append(p99s, p99)
		}
		slices.Sort(p99s)
		fmt.Printf("latency %-6s acks=all %.0f records/s of %d B: p99 %.3f ms, worst of runs %v µs (bar <= 1.5 ms for gregor)\n",
			s.name, o.latencyRate, o.size, p99s[len(p99s)-1]/1000, p99s)
	}
	return nil
}

func median(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// broker is one started server process.
type broker struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

func start(s side, dir string) (*broker, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd, err := s.start(port, dir)
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "broker.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child keeps its own descriptor
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b := &broker{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(b.done) }()
	if err := b.waitReady(30 * time.Second); err != nil {
		b.stop()
		return nil, err
	}
	if s.name == "gregor" {
		if err := createTopic(b.addr); err != nil {
			b.stop()
			return nil, err
		}
	}
	return b, nil
}

func (b *broker) waitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case <-b.done:
			return fmt.Errorf("broker exited: %v", b.cmd.ProcessState)
		default:
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err = kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
			cancel()
			cl.Close()
			if err == nil {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond) // a process gives no readiness event to wait on
	}
	return fmt.Errorf("broker at %s not ready after %v", b.addr, d)
}

func (b *broker) stop() {
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(20 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
}

func createTopic(addr string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, 3, 1, nil, "perf")
	if err != nil {
		return err
	}
	return resp.Error()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// cpuSeconds is the process's utime+stime from /proc/<pid>/stat (fields 14
// and 15, in USER_HZ = 100 ticks per second on Linux).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// f[0] is field 3 (state); utime is field 14 → f[11], stime f[12].
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse %s", s)
	}
	return (ut + st) / 100, nil
}

// tool runs a gregor perf tool and returns its stdout.
func tool(ctx context.Context, o opts, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, o.gregor, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w\n%s", args[0], err, out)
	}
	return string(out), nil
}

// produced is what the producer-perf-test's last lines say.
type produced struct {
	records          int64
	rate, mb, p99Mic float64
}

// produce runs producer-perf-test and parses Kafka's final line and the
// µs percentile line.
func produce(ctx context.Context, o opts, args ...string) (produced, error) {
	out, err := tool(ctx, o, append([]string{"producer-perf-test", "--topic", "perf", "--record-size", strconv.Itoa(o.size),
		"--print-latency-us", "--reporting-interval", "3600000"}, args...)...)
	if err != nil {
		return produced{}, err
	}
	var p produced
	var avg, maxLat float64
	var p50, p95, p99, p999 int64
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		return p, fmt.Errorf("producer-perf-test printed %q", out)
	}
	if _, err := fmt.Sscanf(lines[len(lines)-2], "%d records sent, %f records/sec (%f MB/sec), %f ms avg latency, %f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
		&p.records, &p.rate, &p.mb, &avg, &maxLat, &p50, &p95, &p99, &p999); err != nil {
		return p, fmt.Errorf("final line %q: %v", lines[len(lines)-2], err)
	}
	var u50, u95, u99, u999 int64
	if _, err := fmt.Sscanf(lines[len(lines)-1], "latency percentiles: %d us 50th, %d us 95th, %d us 99th, %d us 99.9th.", &u50, &u95, &u99, &u999); err != nil {
		return p, fmt.Errorf("latency line %q: %v", lines[len(lines)-1], err)
	}
	p.p99Mic = float64(u99)
	return p, nil
}

func throughput(o opts, s side, dir string) (result, error) {
	b, err := start(s, dir)
	if err != nil {
		return result{}, err
	}
	defer b.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cpu0, err := cpuSeconds(b.cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	n := strconv.FormatInt(o.records, 10)
	p, err := produce(ctx, o, append([]string{"--num-records", n, "--throughput", "-1", "--producer-props", "bootstrap.servers=" + b.addr}, o.props...)...)
	if err != nil {
		return result{}, err
	}
	cpu1, err := cpuSeconds(b.cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	if p.records != o.records {
		return result{}, fmt.Errorf("only %d of %d records acknowledged", p.records, o.records)
	}
	out, err := tool(ctx, o, "consumer-perf-test", "--bootstrap-server", b.addr, "--topic", "perf", "--messages", n, "--hide-header", "--timeout", "10000")
	if err != nil {
		return result{}, err
	}
	f := strings.Split(strings.TrimSpace(out), ", ")
	if len(f) != 10 || f[4] != n {
		return result{}, fmt.Errorf("consumer-perf-test printed %q", out)
	}
	rate, err := strconv.ParseFloat(f[5], 64)
	if err != nil {
		return result{}, err
	}
	gb := float64(o.records) * float64(o.size) / 1e9
	return result{produceRate: p.rate, produceMB: p.mb, consumeRate: rate, cpuPerGB: (cpu1 - cpu0) / gb}, nil
}

// latency runs acks=all at o.latencyRate records/s and returns the p99
// produce latency in µs.
func latency(o opts, s side, dir string) (float64, error) {
	b, err := start(s, dir)
	if err != nil {
		return 0, err
	}
	defer b.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := produce(ctx, o, "--num-records", strconv.FormatInt(o.latencyRecords, 10), "--throughput", strconv.FormatFloat(o.latencyRate, 'f', -1, 64),
		"--producer-props", "bootstrap.servers="+b.addr, "acks=all", "linger.ms=0")
	if err != nil {
		return 0, err
	}
	return p.p99Mic, nil
}
