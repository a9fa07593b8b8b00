// Command compare is `make bench-compare`: Gregor against franz-go's kfake
// (in memory, run as its own process by test/bench/kfakeserver) on one
// machine, single broker, a 3-partition topic, 1 KiB records, acks=1,
// clients on loopback. Runs alternate A B A B; for each side it prints the
// median producer and consumer records/s and the broker's CPU seconds
// (utime+stime from /proc/<pid>/stat) per GB produced, then the ratios with
// PASS/FAIL against the bars, then the end-to-end latency at 10,000
// records/s with acks=all (runs alternate A B A B too; the median p99 per
// side and every run are printed).
//
// The throughput clients are `gregor producer-perf-test` and `gregor
// consumer-perf-test`, run as processes; their output lines are parsed.
// The latency run is end to end and in this process: a franz-go producer
// (acks=all, no linger, no compression) sends at the paced rate, each
// record's value starting with its send time, and a franz-go consumer
// reading the topic takes, for every record, its receive time (when
// PollFetches returned it) minus that send time. Both use the same
// monotonic clock.
//
// With -mode security it is `make bench-security` instead: one Gregor
// single node with a PLAINTEXT and a SASL_SSL listener, produce and
// consume over each, A B A B (security.go).
//
//	go run ./test/bench/compare -gregor ./gregor -kfake /tmp/kfakeserver
//	go run ./test/bench/compare -mode security -gregor ./gregor
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/bench/benchproc"
)

type opts struct {
	mode           string
	gregor, kfake  string
	rounds         int
	records        int64
	size           int
	latencyRecords int64
	latencyRate    float64
	latencyRounds  int
	props          []string
}

// The bars of the issue (Gregor against kfake, and Gregor's own p99).
const (
	barProduce    = 1.25 // produce records/s ratio, at least
	barConsume    = 1.25 // consume records/s ratio, at least
	barCPU        = 0.50 // broker CPU s/GB ratio, at most
	barLatencyP99 = 1.5  // ms, end-to-end p99 at 10,000 records/s acks=all, at most
)

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func main() {
	var o opts
	var props string
	flag.StringVar(&o.mode, "mode", "compare", "compare: Gregor vs kfake; security: Gregor's SASL_SSL vs PLAINTEXT listener")
	flag.StringVar(&o.gregor, "gregor", "./gregor", "gregor binary")
	flag.StringVar(&o.kfake, "kfake", "", "kfakeserver binary (test/bench/kfakeserver)")
	flag.IntVar(&o.rounds, "rounds", 3, fmt.Sprintf("A/B rounds of the throughput runs (0: latency only; -mode security: default %d)", securityRoundsDefault))
	flag.Int64Var(&o.records, "records", 300000, fmt.Sprintf("records per throughput run (-mode security: default %d)", securityRecordsDefault))
	flag.IntVar(&o.size, "record-size", 1024, "record size in bytes")
	flag.Int64Var(&o.latencyRecords, "latency-records", 50000, "records measured in each acks=all latency run")
	flag.Float64Var(&o.latencyRate, "latency-rate", 10000, "records/s in the latency run")
	flag.IntVar(&o.latencyRounds, "latency-rounds", 3, "A/B rounds of the latency run (0: none)")
	flag.StringVar(&props, "producer-props", "acks=1 linger.ms=5 batch.size=262144 compression.type=none", "producer properties for the throughput runs")
	flag.Parse()
	if o.mode == "security" {
		// Bigger runs than the kfake comparison's: one run of 300,000
		// records over loopback lasts well under a second here, too short
		// for CPU ticks (10 ms) and the rates to settle.
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["records"] {
			o.records = securityRecordsDefault
		}
		if !set["rounds"] {
			o.rounds = securityRoundsDefault
		}
		for _, f := range []string{"kfake", "latency-records", "latency-rate", "latency-rounds"} {
			if set[f] {
				fmt.Fprintf(os.Stderr, "compare: -%s has no effect with -mode security (no kfake, no latency runs)\n", f)
				os.Exit(2)
			}
		}
	}
	o.props = strings.Fields(props)
	switch {
	case o.mode != "compare" && o.mode != "security":
		fmt.Fprintf(os.Stderr, "compare: -mode %q: want compare or security\n", o.mode)
		os.Exit(2)
	case o.mode == "compare" && o.kfake == "":
		fmt.Fprintln(os.Stderr, "compare: -kfake is required")
		os.Exit(2)
	case o.records < 1:
		fmt.Fprintln(os.Stderr, "compare: -records must be at least 1")
		os.Exit(2)
	case o.mode == "security" && o.rounds < 1:
		fmt.Fprintln(os.Stderr, "compare: -mode security needs -rounds of at least 1")
		os.Exit(2)
	}
	if o.size < stampSize {
		fmt.Fprintf(os.Stderr, "compare: -record-size must be at least %d (the latency run stamps values)\n", stampSize)
		os.Exit(2)
	}
	if os.Getenv("GOGC") == "" {
		// The latency run's producer and consumer live in this process,
		// whose live heap is a few MB: at the default GOGC it collected
		// every ~25 ms (each record's value is a fresh 1 KiB), and those
		// cycles stalled its own clients by milliseconds, tripling the
		// measured p99 for both brokers. The measuring side must not
		// dominate what it measures.
		debug.SetGCPercent(1000)
	}
	run := run
	if o.mode == "security" {
		run = securityRounds
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

type result struct {
	produceRate, produceMB, consumeRate, cpuPerGB float64
}

// side is one broker under test: how to start it on a port in dir, and
// whether the "perf" topic must be created once it is up.
type side struct {
	name       string
	start      func(port int, dir string) (*exec.Cmd, error)
	createPerf bool
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
		}, true},
		{"kfake", func(port int, dir string) (*exec.Cmd, error) {
			return exec.Command(o.kfake, "-port", strconv.Itoa(port), "-topics", "perf", "-partitions", "3"), nil
		}, false},
	}
	if o.rounds > 0 {
		if err := throughputRounds(o, sides, tmp); err != nil {
			return err
		}
	}
	p99s := map[string][]float64{}
	for r := 1; r <= o.latencyRounds; r++ {
		for _, s := range sides {
			l, err := latency(o, s, filepath.Join(tmp, fmt.Sprintf("%s-lat-%d", s.name, r)))
			if err != nil {
				return fmt.Errorf("%s latency round %d: %w", s.name, r, err)
			}
			fmt.Printf("latency round %d %-6s end-to-end acks=all %.0f records/s of %d B: p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms  (%d records, sent at %.0f records/s)\n",
				r, s.name, o.latencyRate, o.size, ms(l.p50), ms(l.p99), ms(l.p999), ms(l.max), l.n, l.rate)
			p99s[s.name] = append(p99s[s.name], ms(l.p99))
		}
	}
	for _, s := range sides {
		v := p99s[s.name]
		if len(v) == 0 {
			break // -latency-rounds 0
		}
		m := medianOf(v)
		bar := ""
		if s.name == "gregor" {
			bar = fmt.Sprintf("  (bar <= %.1f ms %s)", barLatencyP99, verdict(m <= barLatencyP99))
		}
		runs := make([]string, len(v))
		for i, x := range v {
			runs[i] = fmt.Sprintf("%.3f", x)
		}
		fmt.Printf("latency median %-6s end-to-end acks=all p99 %.3f ms over runs [%s] ms%s\n", s.name, m, strings.Join(runs, " "), bar)
	}
	return nil
}

// throughputRounds runs the produce/consume rounds A B A B and prints each
// run, the medians and the ratios against the bars.
func throughputRounds(o opts, sides []side, tmp string) error {
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
	pr, cr, cpu := g.produceRate/k.produceRate, g.consumeRate/k.consumeRate, g.cpuPerGB/k.cpuPerGB
	fmt.Printf("ratio gregor/kfake: produce %.2fx (bar >= %.2f %s)  consume %.2fx (bar >= %.2f %s)  CPU per GB %.2fx (bar <= %.2f %s)\n",
		pr, barProduce, verdict(pr >= barProduce), cr, barConsume, verdict(cr >= barConsume), cpu, barCPU, verdict(cpu <= barCPU))
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func medianOf(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func median(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	return medianOf(v)
}

// broker is one started server process.
type broker struct {
	proc *benchproc.Process
	addr string
}

func start(s side, dir string) (*broker, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := benchproc.FreePort()
	if err != nil {
		return nil, err
	}
	cmd, err := s.start(port, dir)
	if err != nil {
		return nil, err
	}
	p, err := benchproc.Start(cmd, filepath.Join(dir, "broker.log"))
	if err != nil {
		return nil, err
	}
	b := &broker{proc: p, addr: fmt.Sprintf("127.0.0.1:%d", port)}
	if err := p.WaitKafka(b.addr, 30*time.Second); err != nil {
		b.stop()
		return nil, err
	}
	if s.createPerf {
		if err := createTopic(b.addr, "perf"); err != nil {
			b.stop()
			return nil, err
		}
	}
	return b, nil
}

func (b *broker) stop() { b.proc.Stop(20 * time.Second) }

// createTopic creates topic with 3 partitions, replication factor 1.
func createTopic(addr, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, 3, 1, nil, topic)
	if err != nil {
		return err
	}
	return resp.Error()
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

// produce runs producer-perf-test on topic and parses Kafka's final line
// and the µs percentile line.
func produce(ctx context.Context, o opts, topic string, args ...string) (produced, error) {
	out, err := tool(ctx, o, append([]string{"producer-perf-test", "--topic", topic, "--record-size", strconv.Itoa(o.size),
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
	cpu0, err := benchproc.CPUSeconds(b.proc.Pid())
	if err != nil {
		return result{}, err
	}
	n := strconv.FormatInt(o.records, 10)
	p, err := produce(ctx, o, "perf", append([]string{"--num-records", n, "--throughput", "-1", "--producer-props", "bootstrap.servers=" + b.addr}, o.props...)...)
	if err != nil {
		return result{}, err
	}
	cpu1, err := benchproc.CPUSeconds(b.proc.Pid())
	if err != nil {
		return result{}, err
	}
	if p.records != o.records {
		return result{}, fmt.Errorf("only %d of %d records acknowledged", p.records, o.records)
	}
	c, err := consume(ctx, o, "perf", "--bootstrap-server", b.addr)
	if err != nil {
		return result{}, err
	}
	gb := float64(o.records) * float64(o.size) / 1e9
	return result{produceRate: p.rate, produceMB: p.mb, consumeRate: c.rate, cpuPerGB: (cpu1 - cpu0) / gb}, nil
}

// consumed is what the consumer-perf-test's line says.
type consumed struct {
	rate, mb float64 // nMsg.sec and MB.sec
}

// consume runs consumer-perf-test for o.records records of topic (args
// name the broker and any --consumer.config) and parses its one line.
func consume(ctx context.Context, o opts, topic string, args ...string) (consumed, error) {
	n := strconv.FormatInt(o.records, 10)
	out, err := tool(ctx, o, append([]string{"consumer-perf-test", "--topic", topic, "--messages", n, "--hide-header", "--timeout", "10000"}, args...)...)
	if err != nil {
		return consumed{}, err
	}
	// start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, …
	f := strings.Split(strings.TrimSpace(out), ", ")
	if len(f) != 10 || f[4] != n {
		return consumed{}, fmt.Errorf("consumer-perf-test printed %q", out)
	}
	mb, err1 := strconv.ParseFloat(f[3], 64)
	rate, err2 := strconv.ParseFloat(f[5], 64)
	if err := errors.Join(err1, err2); err != nil {
		return consumed{}, fmt.Errorf("consumer-perf-test printed %q: %w", out, err)
	}
	return consumed{rate: rate, mb: mb}, nil
}

// latencies is one end-to-end latency run: percentiles over n records and
// the rate they were actually sent at.
type latencies struct {
	n                   int
	p50, p99, p999, max time.Duration
	rate                float64
}

// A latency-run value starts with stampSize bytes: the send time in ns
// since clock0 (monotonic), then one byte, 1 for warm-up records.
const stampSize = 9

var clock0 = time.Now()

func now() int64 { return int64(time.Since(clock0)) }

// latency starts a fresh broker and measures end to end: a consumer reads
// the topic from the start while a producer (acks=all, no linger, no
// compression, as the perf tool's defaults) sends
// o.latencyRecords records at o.latencyRate records/s; a record's latency
// is the time the consumer got it minus the time it was handed to the
// producer. A few warm-up records go first (connections, metadata, the
// consumer's first fetch) and are not counted.
func latency(o opts, s side, dir string) (latencies, error) {
	b, err := start(s, dir)
	if err != nil {
		return latencies{}, err
	}
	defer b.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	consumer, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.ConsumeTopics("perf"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return latencies{}, err
	}
	defer consumer.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.DefaultProduceTopic("perf"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return latencies{}, err
	}
	defer producer.Close()

	const warmup = 10
	n := int(o.latencyRecords)
	lat := make([]time.Duration, 0, n)
	warmedUp := make(chan struct{})
	consumed := make(chan error, 1)
	go func() {
		seenWarm := 0
		for len(lat) < n {
			fs := consumer.PollFetches(ctx)
			got := now()
			if err := ctx.Err(); err != nil {
				consumed <- fmt.Errorf("consumer: %d of %d records after %v", len(lat), n, err)
				return
			}
			var ferr error
			fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("fetch %s/%d: %w", t, p, err) })
			if ferr != nil {
				consumed <- ferr
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				if len(r.Value) < stampSize {
					return
				}
				if r.Value[8] == 1 {
					if seenWarm++; seenWarm == warmup {
						close(warmedUp)
					}
					return
				}
				lat = append(lat, time.Duration(got-int64(binary.BigEndian.Uint64(r.Value))))
			})
		}
		consumed <- nil
	}()

	var perr atomic.Pointer[error]
	var acked sync.WaitGroup
	send := func(warm bool) {
		v := make([]byte, o.size)
		if warm {
			v[8] = 1
		}
		acked.Add(1)
		binary.BigEndian.PutUint64(v, uint64(now()))
		producer.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				perr.CompareAndSwap(nil, &err)
			}
			acked.Done()
		})
	}
	for range warmup {
		send(true)
	}
	select {
	case <-warmedUp:
	case err := <-consumed:
		return latencies{}, fmt.Errorf("warm-up: %v", err)
	case <-time.After(30 * time.Second):
		return latencies{}, errors.New("warm-up records not consumed within 30s")
	}

	// Paced: record i is due at start + i/rate. Go's timers sleep at least
	// about a millisecond, so records due meanwhile go out together, each
	// stamped as it is handed to the producer.
	interval := time.Duration(float64(time.Second) / o.latencyRate)
	begin := time.Now()
	for i := 0; i < n; {
		due := int(time.Since(begin)/interval) + 1
		for ; i < n && i < due; i++ {
			send(false)
		}
		if i < n {
			time.Sleep(time.Until(begin.Add(time.Duration(i) * interval)))
		}
	}
	rate := float64(n) / time.Since(begin).Seconds()
	acked.Wait()
	if e := perr.Load(); e != nil {
		return latencies{}, fmt.Errorf("produce: %w", *e)
	}
	select {
	case err := <-consumed:
		if err != nil {
			return latencies{}, err
		}
	case <-time.After(60 * time.Second):
		cancel()
		return latencies{}, fmt.Errorf("consumer did not get all %d records within 60s of the last ack", n)
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { // nearest rank
		return lat[max(0, int(math.Ceil(p*float64(len(lat))))-1)]
	}
	return latencies{n: len(lat), p50: pct(0.50), p99: pct(0.99), p999: pct(0.999), max: lat[len(lat)-1], rate: rate}, nil
}
