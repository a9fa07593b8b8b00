package perftest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil"
)

// ProducerOptions are kafka-producer-perf-test.sh's flags.
type ProducerOptions struct {
	Topic            string   // --topic (required)
	NumRecords       int64    // --num-records (required)
	RecordSize       int      // --record-size: bytes per record (this or --payload-file)
	PayloadFile      string   // --payload-file: records are random lines (split by PayloadDelimiter) of this file
	PayloadDelimiter string   // --payload-delimiter, default "\n"
	Throughput       float64  // --throughput: records/s cap; <= 0 (-1) = unthrottled (required)
	ProducerProps    []string // --producer-props k=v … (bootstrap.servers, acks, linger.ms, batch.size, compression.type…)
	ProducerConfig   string   // --producer.config: properties file
	// ReportInterval is the progress-line period; Kafka's is 5 s (0 = 5 s).
	ReportInterval time.Duration
	// PrintLatencyMicros prints the percentiles in µs after Kafka's final
	// line (Gregor's --print-latency-us).
	PrintLatencyMicros bool
}

// RunProducer runs the producer perf test, printing Kafka's progress and
// final lines on stdout and errors on stderr; it returns the exit status.
// It produces NumRecords records (fewer if ctx ends first), each either a
// fixed random payload of RecordSize bytes (uppercase letters, as Kafka) or
// a random entry of PayloadFile.
func RunProducer(ctx context.Context, o ProducerOptions, stdout, stderr io.Writer) int {
	sum, err := Produce(ctx, o, stdout, stderr)
	if err != nil {
		return clientutil.Report(stderr, "ERROR ", err)
	}
	sum.printFinal(stdout)
	if o.PrintLatencyMicros {
		sum.printMicros(stdout)
	}
	return 0
}

// Produce is RunProducer without the final lines: it returns the Summary
// (for tests and the bench driver). Progress lines go to stdout, the first
// send error of each kind to stderr.
func Produce(ctx context.Context, o ProducerOptions, stdout, stderr io.Writer) (Summary, error) {
	if o.Topic == "" {
		return Summary{}, clientutil.Usage("Missing required argument \"[topic]\"")
	}
	if o.NumRecords <= 0 {
		return Summary{}, clientutil.Usage("--num-records must be positive")
	}
	if (o.RecordSize > 0) == (o.PayloadFile != "") {
		return Summary{}, clientutil.Usage("Either --record-size or --payload-file must be specified but not both.")
	}
	props, err := clientutil.ParseProps("--producer-props", o.ProducerProps)
	if err != nil {
		return Summary{}, clientutil.Usage("%v", err)
	}
	if o.ProducerConfig != "" {
		file, err := clientutil.LoadPropsFile(o.ProducerConfig)
		if err != nil {
			return Summary{}, err
		}
		props = clientutil.Merge(file, props)
	}
	if props["bootstrap.servers"] == "" {
		return Summary{}, clientutil.Usage("Either --producer-props or --producer.config must be specified with bootstrap.servers")
	}
	seeds, err := clientutil.ParseBootstrap("bootstrap.servers", props["bootstrap.servers"])
	if err != nil {
		return Summary{}, clientutil.Usage("%v", err)
	}
	kopts, err := clientutil.ProducerOptions(props)
	if err != nil {
		return Summary{}, clientutil.Usage("%v", err)
	}
	for _, k := range kopts.Ignored {
		fmt.Fprintf(stderr, "WARN The configuration '%s' was supplied but isn't a known config.\n", k)
	}
	payloads, err := loadPayloads(o)
	if err != nil {
		return Summary{}, err
	}
	// The Java producer always lets its Metadata requests auto-create the
	// topic (the broker's auto.create.topics.enable decides), so the
	// README's perf command works on a fresh broker; kgo only does so when
	// asked.
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic(o.Topic)}, kopts.Opts...)...)
	if err != nil {
		return Summary{}, err
	}
	defer cl.Close()

	interval := o.ReportInterval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	start := time.Now()
	st := newStats(o.NumRecords, interval, stdout, start)
	var errOnce sync.Map // error text → printed
	th := throttler{rate: o.Throughput, start: start}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := int64(0); i < o.NumRecords && ctx.Err() == nil; i++ {
		payload := payloads[0]
		if len(payloads) > 1 {
			payload = payloads[rng.IntN(len(payloads))]
		}
		th.wait(ctx, i)
		sent := time.Now()
		cl.Produce(ctx, &kgo.Record{Value: payload}, func(r *kgo.Record, err error) {
			if err != nil {
				if _, dup := errOnce.LoadOrStore(err.Error(), true); !dup {
					fmt.Fprintf(stderr, "ERROR Error when sending message to topic %s: %v\n", o.Topic, err)
				}
				return
			}
			st.record(sent, time.Now(), len(r.Value))
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return Summary{}, err
	}
	return st.summary(time.Now()), nil
}

// loadPayloads returns the payloads to send: one random payload of
// RecordSize uppercase letters, or the PayloadFile's entries.
func loadPayloads(o ProducerOptions) ([][]byte, error) {
	if o.RecordSize > 0 {
		p := make([]byte, o.RecordSize)
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
		for i := range p {
			p[i] = byte('A' + rng.IntN(26))
		}
		return [][]byte{p}, nil
	}
	data, err := os.ReadFile(o.PayloadFile)
	if err != nil {
		return nil, err
	}
	delim := o.PayloadDelimiter
	if delim == "" {
		delim = "\n"
	}
	var out [][]byte
	for _, p := range bytes.Split(data, []byte(delim)) {
		if len(p) > 0 {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("file %s contains no payloads", o.PayloadFile)
	}
	fmt.Printf("Reading payloads from: %s\nNumber of messages read: %d\n", o.PayloadFile, len(out))
	return out, nil
}

// throttler paces sends to rate records/s (Kafka's ThroughputThrottler):
// before record i it waits until start + i/rate. Waits shorter than a
// millisecond are skipped (and caught up on later), so sends come in
// sub-millisecond bursts instead of one timer per record.
type throttler struct {
	rate  float64
	start time.Time
}

func (t *throttler) wait(ctx context.Context, i int64) {
	if t.rate <= 0 {
		return
	}
	due := t.start.Add(time.Duration(float64(i) / t.rate * float64(time.Second)))
	d := time.Until(due)
	if d < time.Millisecond {
		return
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	}
}
