package perftest

import (
	"bytes"
	"cmp"
	"context"
	crand "crypto/rand"
	"encoding/base64"
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
	// line (Gregor's --print-latency-us), and with transactions a line of
	// commit latencies.
	PrintLatencyMicros bool
	// TransactionalID is --transactional-id; it takes precedence over a
	// transactional.id property. Either one, or TransactionDurationSet,
	// turns transactions on (Kafka 3.x ProducerPerformance); without an id
	// the producer uses "performance-producer-" and a random UUID.
	TransactionalID string
	// TransactionDuration is --transaction-duration-ms: a transaction is
	// committed after the first send at least this long after it began
	// (default 3000 ms when transactions are on). Set means the flag was
	// given; it must then be positive.
	TransactionDuration    time.Duration
	TransactionDurationSet bool
}

// defaultTransactionDuration is Kafka's DEFAULT_TRANSACTION_DURATION_MS.
const defaultTransactionDuration = 3000 * time.Millisecond

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
	if o.TransactionDurationSet && o.TransactionDuration <= 0 {
		return Summary{}, clientutil.Usage("--transaction-duration-ms should be greater than zero")
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
	kopts.Warn(stderr)
	payloads, err := loadPayloads(o)
	if err != nil {
		return Summary{}, err
	}
	txnID := cmp.Or(o.TransactionalID, kopts.TransactionalID)
	txns := o.TransactionDurationSet || txnID != ""
	txnDur := o.TransactionDuration
	if txns {
		if txnID == "" {
			txnID = "performance-producer-" + randomUUID()
		}
		if !o.TransactionDurationSet {
			txnDur = defaultTransactionDuration
		}
		kopts.Opts = append(kopts.Opts, kgo.TransactionalID(txnID))
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
	tx := txnLoop{cl: cl, on: txns, every: txnDur, st: st}
	for i := int64(0); i < o.NumRecords && ctx.Err() == nil; i++ {
		payload := payloads[0]
		if len(payloads) > 1 {
			payload = payloads[rng.IntN(len(payloads))]
		}
		th.wait(ctx, i)
		if err := tx.begin(); err != nil {
			return Summary{}, err
		}
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
		if err := tx.maybeCommit(ctx, sent, false); err != nil {
			return Summary{}, err
		}
	}
	if err := tx.maybeCommit(ctx, time.Now(), true); err != nil {
		return Summary{}, err
	}
	if err := cl.Flush(ctx); err != nil {
		return Summary{}, err
	}
	return st.summary(time.Now()), nil
}

// txnLoop runs ProducerPerformance's transactions: one begins before the
// first send after a commit, and is committed after the first send at
// least every after its start (and at the end). A commit is Flush plus
// EndTransaction(TryCommit), what Java's commitTransaction does; its
// duration is recorded as one commit latency, and EndTransaction's alone
// (AddOffsets-free EndTxn round trip: the coordinator's PrepareCommit
// append) as one EndTxn latency.
type txnLoop struct {
	cl    *kgo.Client
	on    bool
	every time.Duration
	st    *stats
	open  bool
	began time.Time
}

func (t *txnLoop) begin() error {
	if !t.on || t.open {
		return nil
	}
	if err := t.cl.BeginTransaction(); err != nil {
		return err
	}
	t.open, t.began = true, time.Now()
	return nil
}

// maybeCommit commits the open transaction when sent is every past its
// start, or when last.
func (t *txnLoop) maybeCommit(ctx context.Context, sent time.Time, last bool) error {
	if !t.open || (!last && sent.Sub(t.began) < t.every) {
		return nil
	}
	start := time.Now()
	if err := t.cl.Flush(ctx); err != nil {
		return err
	}
	flushed := time.Now()
	if err := t.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	t.open = false
	t.st.commit(time.Since(start), time.Since(flushed))
	return nil
}

// randomUUID is a random id as Kafka's Uuid.randomUuid().toString() prints
// it: 16 random bytes in unpadded URL-safe base64.
func randomUUID() string {
	var b [16]byte
	_, _ = crand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
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
