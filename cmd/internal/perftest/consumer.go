package perftest

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil"
)

// ConsumerOptions are kafka-consumer-perf-test.sh's flags.
type ConsumerOptions struct {
	BootstrapServer string // --bootstrap-server (required; --broker-list is its old name)
	Topic           string // --topic (required)
	Messages        int64  // --messages: how many records to consume (required)
	// Group is --group. Kafka's tool always joins a group (default
	// perf-consumer-<random>); Gregor's joins one only when --group is
	// given, and otherwise assigns itself every partition directly
	// (rebalance.time.ms is then 0).
	Group          string
	FetchSize      int32         // --fetch-size: max.partition.fetch.bytes, default 1048576
	FromLatest     bool          // --from-latest: start at the log end instead of the log start
	Timeout        time.Duration // --timeout: give up after this long without records, default 10 s
	ConsumerConfig string        // --consumer.config: properties file
	HideHeader     bool          // --hide-header
	// ShowDetailedStats (--show-detailed-stats) prints a row every
	// ReportingInterval (--reporting-interval, default 5 s).
	ShowDetailedStats bool
	ReportingInterval time.Duration
}

// ConsumerResult is what a consumer run measured.
type ConsumerResult struct {
	Start, End   time.Time
	Messages     int64
	Bytes        int64 // keys + values, as Kafka counts
	RebalanceMs  int64
	FetchMs      int64 // from the first poll after joining to the end
	TimedOut     bool
	MessagesPerS float64
}

// formatDate is Kafka's default --date-format, yyyy-MM-dd HH:mm:ss:SSS.
// Go layouts know milliseconds only after '.' or ',' (a layout ending in
// ":000" prints a literal ":000"), so they are appended by hand.
func formatDate(t time.Time) string {
	return fmt.Sprintf("%s:%03d", t.Format("2006-01-02 15:04:05"), t.Nanosecond()/int(time.Millisecond))
}

// RunConsumer runs the consumer perf test and prints Kafka's CSV header
// (unless HideHeader) and result row on stdout; it returns the exit status.
func RunConsumer(ctx context.Context, o ConsumerOptions, stdout, stderr io.Writer) int {
	if !o.HideHeader {
		if o.ShowDetailedStats {
			fmt.Fprintln(stdout, "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
		} else {
			fmt.Fprintln(stdout, "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
		}
	}
	res, err := Consume(ctx, o, stdout, stderr)
	if err != nil {
		return clientutil.Report(stderr, "ERROR ", err)
	}
	if res.TimedOut {
		fmt.Fprintf(stderr, "WARN Exiting before consuming the expected number of messages: timeout (%d ms) exceeded. You can use the --timeout option to increase the timeout.\n", o.Timeout.Milliseconds())
	}
	if !o.ShowDetailedStats {
		fmt.Fprintln(stdout, res.row())
	}
	return 0
}

// row is Kafka's summary CSV row.
func (r ConsumerResult) row() string {
	mb := float64(r.Bytes) / (1024 * 1024)
	elapsed := r.End.Sub(r.Start).Seconds()
	fetchS := float64(r.FetchMs) / 1000
	return fmt.Sprintf("%s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f",
		formatDate(r.Start), formatDate(r.End), mb, div(mb, elapsed), r.Messages, div(float64(r.Messages), elapsed),
		r.RebalanceMs, r.FetchMs, div(mb, fetchS), div(float64(r.Messages), fetchS))
}

func div(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// Consume reads up to o.Messages records from o.Topic and returns what it
// measured. It stops early when no record arrives for o.Timeout (TimedOut)
// or ctx ends.
func Consume(ctx context.Context, o ConsumerOptions, stdout, stderr io.Writer) (ConsumerResult, error) {
	if o.BootstrapServer == "" {
		return ConsumerResult{}, clientutil.Usage("Missing required argument \"[bootstrap-server]\"")
	}
	if o.Topic == "" {
		return ConsumerResult{}, clientutil.Usage("Missing required argument \"[topic]\"")
	}
	if o.Messages <= 0 {
		return ConsumerResult{}, clientutil.Usage("Missing required argument \"[messages]\"")
	}
	seeds, err := clientutil.ParseBootstrap("--bootstrap-server", o.BootstrapServer)
	if err != nil {
		return ConsumerResult{}, clientutil.Usage("%v", err)
	}
	props := map[string]string{}
	if o.ConsumerConfig != "" {
		if props, err = clientutil.LoadPropsFile(o.ConsumerConfig); err != nil {
			return ConsumerResult{}, err
		}
	}
	kopts, err := clientutil.ConsumerOptions(props)
	if err != nil {
		return ConsumerResult{}, clientutil.Usage("%v", err)
	}
	kopts.Warn(stderr)
	fetchSize := o.FetchSize
	if fetchSize <= 0 {
		fetchSize = 1 << 20
	}
	reset := kgo.NewOffset().AtStart()
	if o.FromLatest {
		reset = kgo.NewOffset().AtEnd()
	}
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(o.Topic), kgo.ConsumeResetOffset(reset),
		kgo.FetchMaxPartitionBytes(fetchSize)}
	opts = append(opts, kopts.Opts...)
	group := o.Group
	if group == "" {
		group = kopts.Group
	}
	joined := make(chan struct{}, 1)
	if group != "" {
		opts = append(opts, kgo.ConsumerGroup(group), kgo.DisableAutoCommit(),
			kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
				select {
				case joined <- struct{}{}:
				default:
				}
			}))
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	interval := o.ReportingInterval
	if interval <= 0 {
		interval = 5 * time.Second
	}

	res := ConsumerResult{Start: time.Now()}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	fetchStart := res.Start
	lastRecord := time.Now()
	lastReport, lastMsgs, lastBytes := time.Now(), int64(0), int64(0)
	for res.Messages < o.Messages {
		pctx, cancel := context.WithDeadline(ctx, lastRecord.Add(timeout))
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			break
		}
		if group != "" && res.RebalanceMs == 0 {
			select {
			case <-joined:
				now := time.Now()
				res.RebalanceMs, fetchStart = now.Sub(res.Start).Milliseconds(), now
			default:
			}
		}
		var n int64
		fs.EachRecord(func(r *kgo.Record) {
			n++
			res.Bytes += int64(len(r.Key) + len(r.Value))
		})
		for _, fe := range fs.Errors() {
			if fe.Err != context.DeadlineExceeded && fe.Err != context.Canceled {
				fmt.Fprintf(stderr, "WARN fetch %s[%d]: %v\n", fe.Topic, fe.Partition, fe.Err)
			}
		}
		now := time.Now()
		if n == 0 {
			if now.Sub(lastRecord) >= timeout {
				res.TimedOut = true
				break
			}
			continue
		}
		res.Messages += n
		lastRecord = now
		if o.ShowDetailedStats && now.Sub(lastReport) >= interval {
			el := now.Sub(lastReport).Seconds()
			mb := float64(res.Bytes) / (1024 * 1024)
			fmt.Fprintf(stdout, "%s, %d, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f\n", formatDate(now), 0, mb,
				float64(res.Bytes-lastBytes)/(1024*1024)/el, res.Messages, float64(res.Messages-lastMsgs)/el,
				res.RebalanceMs, now.Sub(fetchStart).Milliseconds(), float64(res.Bytes-lastBytes)/(1024*1024)/el, float64(res.Messages-lastMsgs)/el)
			lastReport, lastMsgs, lastBytes = now, res.Messages, res.Bytes
		}
	}
	res.End = time.Now()
	res.FetchMs = res.End.Sub(fetchStart).Milliseconds()
	res.MessagesPerS = div(float64(res.Messages), res.End.Sub(res.Start).Seconds())
	return res, nil
}
