package verifiable

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/time/rate"

	"gregor/cmd/internal/clientutil"
)

// ProducerOptions are kafka-verifiable-producer.sh's flags.
type ProducerOptions struct {
	Topic           string // --topic (required)
	BootstrapServer string // --bootstrap-server
	BrokerList      string // --broker-list (deprecated; one of the two is required)
	MaxMessages     int64  // --max-messages (-1 = until stopped)
	Throughput      int64  // --throughput msgs/s (< 0 = unthrottled; 0 = one message, then wait)
	Acks            int    // --acks: 0, 1 or -1
	ProducerConfig  string // --producer.config properties file
	CreateTime      int64  // --message-create-time ms (-1 = the client's clock)
	ValuePrefix     *int   // --value-prefix: values "P.N"
	RepeatingKeys   *int   // --repeating-keys: keys 0..N-1, repeating
}

// argError is argparse4j's error line ("verifiable-producer: error: …").
func argError(tool string, stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "%s: error: %s\n", tool, fmt.Sprintf(format, args...))
	return 1
}

func checkConnection(tool string, stderr io.Writer, bs, bl string, bsSet, blSet bool) (string, int) {
	switch {
	case bsSet && blSet:
		return "", argError(tool, stderr, "argument --broker-list: not allowed with argument --bootstrap-server")
	case !bsSet && !blSet:
		return "", argError(tool, stderr, "one of the arguments --bootstrap-server --broker-list is required")
	case bsSet:
		return bs, 0
	}
	return bl, 0
}

// sendSuccess and sendError are producer_send_success / producer_send_error.
type sendSuccess struct {
	event
	Key       *string `json:"key"`
	Value     string  `json:"value"`
	Offset    int64   `json:"offset"`
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
}

type sendError struct {
	event
	Topic     string  `json:"topic"`
	Key       *string `json:"key"`
	Value     string  `json:"value"`
	Exception string  `json:"exception"`
	Message   string  `json:"message"`
}

type toolData struct {
	event
	Sent             int64      `json:"sent"`
	Acked            int64      `json:"acked"`
	TargetThroughput int64      `json:"target_throughput"`
	AvgThroughput    javaDouble `json:"avg_throughput"`
}

// RunProducer runs kafka-verifiable-producer.sh until --max-messages are
// sent or ctx ends (the signal), then flushes, prints shutdown_complete
// and tool_data, and returns the exit status (1 for bad flags or
// properties, before startup_complete). bsSet/blSet say which
// connection flag was given.
func RunProducer(ctx context.Context, o ProducerOptions, bsSet, blSet bool, stdout, stderr io.Writer) int {
	const tool = "verifiable-producer"
	if o.Topic == "" {
		return argError(tool, stderr, "argument --topic is required")
	}
	bs, code := checkConnection(tool, stderr, o.BootstrapServer, o.BrokerList, bsSet, blSet)
	if code != 0 {
		return code
	}
	switch o.Acks {
	case 0, 1, -1:
	default:
		return argError(tool, stderr, "argument --acks: invalid choice: '%d' (choose from {0, 1, -1})", o.Acks)
	}
	// As VerifiableProducer: acks and no retries, then the file's
	// properties over them. retries=0 turns idempotence off in Kafka's
	// producer unless it was asked for.
	props := map[string]string{"acks": strconv.Itoa(o.Acks), "retries": "0", "enable.idempotence": "false"}
	if o.ProducerConfig != "" {
		file, err := clientutil.LoadPropsFile(o.ProducerConfig)
		if err != nil {
			return argError(tool, stderr, "%v", err)
		}
		props = clientutil.Merge(props, file)
	}
	po, err := clientutil.ProducerOptions(props)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	seeds, err := clientutil.ParseBootstrap("--bootstrap-server", bs)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	po.Warn(stderr)
	// delivery.timeout.ms's Kafka default (120 s) bounds every send, so
	// the closing flush ends even with the brokers gone; the file may
	// override it (its option comes later and wins).
	opts := append([]kgo.Opt{kgo.RecordDeliveryTimeout(2 * time.Minute)}, po.Opts...)
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(seeds...))...)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	out := &printer{w: stdout}
	var sent int64
	var acked atomic.Int64
	startMs := nowMs()
	createTime := o.CreateTime
	var limiter *rate.Limiter
	if o.Throughput > 0 {
		limiter = rate.NewLimiter(rate.Limit(o.Throughput), 1)
	}
	keyCounter := 0
	out.print(head("startup_complete"))
	max := o.MaxMessages
	if max < 0 {
		max = 1<<63 - 1
	}
	for i := int64(0); i < max && ctx.Err() == nil; i++ {
		if limiter != nil && limiter.Wait(ctx) != nil {
			break
		}
		if o.Throughput == 0 && i > 0 { // Kafka's throttler at 0 sleeps for ever
			<-ctx.Done()
			break
		}
		var key *string
		if o.RepeatingKeys != nil {
			k := strconv.Itoa(keyCounter)
			key = &k
			if keyCounter++; keyCounter == *o.RepeatingKeys {
				keyCounter = 0
			}
		}
		value := strconv.FormatInt(i, 10)
		if o.ValuePrefix != nil {
			value = fmt.Sprintf("%d.%d", *o.ValuePrefix, i)
		}
		rec := &kgo.Record{Topic: o.Topic, Value: []byte(value)}
		if key != nil {
			rec.Key = []byte(*key)
		}
		if createTime >= 0 {
			rec.Timestamp = time.UnixMilli(createTime)
			createTime += nowMs() - startMs // VerifiableProducer's own arithmetic
		}
		sent++
		// Context.Background: a send already begun is flushed on shutdown
		// rather than cancelled, as KafkaProducer.close flushes.
		cl.Produce(context.Background(), rec, func(r *kgo.Record, err error) {
			if err != nil {
				out.print(sendError{event: head("producer_send_error"), Topic: o.Topic, Key: key, Value: value,
					Exception: exceptionClass(err), Message: exceptionMessage(err)})
				return
			}
			acked.Add(1)
			out.print(sendSuccess{event: head("producer_send_success"), Key: key, Value: value, Offset: r.Offset, Topic: r.Topic, Partition: r.Partition})
		})
	}
	// producer.close(): every send answered, then the closing events.
	_ = cl.Flush(context.Background())
	cl.Close()
	out.print(head("shutdown_complete"))
	stopMs := nowMs()
	avg := 1000 * (float64(acked.Load()) / float64(stopMs-startMs))
	out.print(toolData{event: head("tool_data"), Sent: sent, Acked: acked.Load(), TargetThroughput: o.Throughput, AvgThroughput: javaDouble(avg)})
	return 0
}
