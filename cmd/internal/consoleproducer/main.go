package consoleproducer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil"
)

// Options are kafka-console-producer.sh's inputs.
type Options struct {
	BootstrapServer string   // --bootstrap-server or --broker-list
	ZooKeeper       string   // --zookeeper (refused for now)
	Topic           string   // --topic
	Properties      []string // --property k=v: line reader settings
	ProducerProps   []string // --producer-property k=v
	ProducerConfig  string   // --producer.config file
	Sync            bool     // --sync: wait for each record's ack before reading the next line
	// FlagProps are the producer settings given by explicit flags, as Kafka
	// producer properties (--request-required-acks → acks, --timeout →
	// linger.ms, --batch-size → batch.size, --compression-codec →
	// compression.type…). They override --producer-property and the file.
	FlagProps map[string]string
}

// DefaultProps are ConsoleProducer's defaults for the flags it maps to
// producer properties (Kafka 3.x ConsoleProducerOptions).
var DefaultProps = map[string]string{
	"acks":               "-1",    // --request-required-acks
	"linger.ms":          "1000",  // --timeout
	"batch.size":         "16384", // --batch-size
	"retries":            "3",     // --message-send-max-retries
	"retry.backoff.ms":   "100",   // --retry-backoff-ms
	"request.timeout.ms": "1500",  // --request-timeout-ms
	"compression.type":   "none",  // --compression-codec (gzip when given without a value)
	// Not flags: the Java producer's default max.request.size (the
	// largest record), and ConsoleProducer's client.id.
	"max.request.size": "1048576",
	"client.id":        "console-producer",
}

// Main produces every line of stdin as a record and flushes at EOF. It
// returns the exit status: 0 when every record was acknowledged; 1 with one
// line on stderr on a bad argument, a malformed line or a produce error; 2
// for --zookeeper. Warnings (unknown properties) go to stderr.
func Main(ctx context.Context, o Options, stdin io.Reader, stderr io.Writer) int {
	return clientutil.Report(stderr, "ERROR ", run(ctx, o, stdin, stderr))
}

func run(ctx context.Context, o Options, stdin io.Reader, stderr io.Writer) error {
	if o.BootstrapServer == "" {
		if o.ZooKeeper != "" {
			return clientutil.ZooKeeperUnsupported("kafka-console-producer")
		}
		return clientutil.Usage("Missing required argument \"[bootstrap-server]\"")
	}
	if o.Topic == "" {
		return clientutil.Usage("Missing required argument \"[topic]\"")
	}
	seeds, err := clientutil.ParseBootstrap("--bootstrap-server", o.BootstrapServer)
	if err != nil {
		return clientutil.Usage("%v", err)
	}
	readerProps, err := clientutil.ParseProps("--property", o.Properties)
	if err != nil {
		return clientutil.Usage("%v", err)
	}
	reader, unknownReader, err := NewLineReader(readerProps)
	if err != nil {
		return clientutil.Usage("%v", err)
	}
	props, err := producerProps(o)
	if err != nil {
		return err
	}
	po, err := clientutil.ProducerOptions(props)
	if err != nil {
		return clientutil.Usage("%v", err)
	}
	sort.Strings(unknownReader)
	po.Ignored = append(unknownReader, po.Ignored...)
	po.Warn(stderr)
	opts := append(po.Opts, kgo.SeedBrokers(seeds...), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic(o.Topic))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	var (
		mu       sync.Mutex
		firstErr error
	)
	failed := func() error { mu.Lock(); defer mu.Unlock(); return firstErr }
	promise := func(r *kgo.Record, err error) {
		if err == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			if errors.Is(err, kerr.MessageTooLarge) && po.MaxRequestSize > 0 && recordSize(r) > int(po.MaxRequestSize)-batchOverhead {
				// kgo refused it before sending, as the Java producer
				// does with a RecordTooLargeException.
				err = fmt.Errorf("The message is %d bytes when serialized which is larger than %d, which is the value of the max.request.size configuration.",
					recordSize(r)+batchOverhead, po.MaxRequestSize)
			}
			firstErr = fmt.Errorf("Error when sending message to topic %s with key: %s, value: %d bytes with error: %w",
				r.Topic, keyText(r.Key), len(r.Value), err)
		}
	}
	in := bufio.NewReaderSize(stdin, 64<<10)
	for failed() == nil {
		line, rerr := in.ReadString('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("reading stdin: %w", rerr)
		}
		if line == "" && rerr != nil {
			break // EOF, no partial last line
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		rec, err := reader.Parse(o.Topic, line)
		if err != nil {
			cl.Flush(ctx)
			return err
		}
		if o.Sync {
			promise(rec, cl.ProduceSync(ctx, rec).FirstErr())
		} else {
			cl.Produce(ctx, rec, promise)
		}
		if rerr != nil {
			break
		}
	}
	if err := cl.Flush(ctx); err != nil && failed() == nil {
		return fmt.Errorf("flushing: %w", err)
	}
	return failed()
}

// producerProps merges, lowest precedence first: DefaultProps, the
// --producer.config file, --producer-property, explicit flags.
func producerProps(o Options) (map[string]string, error) {
	var file map[string]string
	if o.ProducerConfig != "" {
		var err error
		if file, err = clientutil.LoadPropsFile(o.ProducerConfig); err != nil {
			return nil, clientutil.Usage("%v", err)
		}
	}
	pp, err := clientutil.ParseProps("--producer-property", o.ProducerProps)
	if err != nil {
		return nil, clientutil.Usage("%v", err)
	}
	return clientutil.Merge(DefaultProps, file, pp, o.FlagProps), nil
}

// batchOverhead is a v2 record batch's header (61 bytes), which wraps
// even a lone record.
const batchOverhead = 61

// recordSize is roughly a record's encoded size without the batch header:
// key, value and headers plus a generous allowance for the varint fields.
func recordSize(r *kgo.Record) int {
	n := len(r.Key) + len(r.Value) + 21
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value) + 10
	}
	return n
}

func keyText(k []byte) string {
	if k == nil {
		return "null"
	}
	return string(k)
}
