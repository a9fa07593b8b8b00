// Package replaylog is `gregor replay-log-producer`
// (kafka-replay-log-producer.sh, Kafka's ReplayLogProducer): it reads a
// topic from the beginning and produces each record — key, value, headers
// and timestamp — to another topic.
package replaylog

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil"
	"gregor/cmd/internal/consoleconsumer"
)

// Options are kafka-replay-log-producer.sh's flags.
type Options struct {
	BrokerList  string // --broker-list host:port[,…]
	ZooKeeper   string // --zookeeper host:port[/chroot]: finds the brokers when --broker-list is absent
	InputTopic  string // --inputtopic
	OutputTopic string // --outputtopic
	Messages    int64  // --messages: how many records to replay; -1 = all
	// Threads is --threads (at least 1): accepted; one kgo producer
	// already sends to every partition concurrently (and an idempotent
	// kgo producer keeps its own in-flight limit).
	Threads int
	// ReportingInterval is --reporting-interval (ms in Kafka): accepted;
	// progress is not reported (Kafka's tool logs nothing either).
	ReportingInterval time.Duration
	Properties        []string // --property: producer properties k=v
	Sync              bool     // --sync: wait for each record's ack
}

// IdleTimeout ends the replay when no record arrived for this long before
// the end offsets seen at start were reached (aborted transactions and
// compaction leave offsets no record carries).
var IdleTimeout = 10 * time.Second

// Main replays and returns the exit status: 0 when every record was
// produced; 1 with one line on stderr otherwise.
func Main(ctx context.Context, o Options, stderr io.Writer) int {
	_, err := Run(ctx, o, stderr)
	return clientutil.Report(stderr, "ERROR ", err)
}

// Run replays the records of InputTopic up to its end offsets at start (or
// Messages of them) to OutputTopic and returns how many were produced.
func Run(ctx context.Context, o Options, stderr io.Writer) (int64, error) {
	if o.InputTopic == "" {
		return 0, clientutil.Usage("Missing required argument \"[inputtopic]\"")
	}
	if o.OutputTopic == "" {
		return 0, clientutil.Usage("Missing required argument \"[outputtopic]\"")
	}
	if o.Threads < 1 {
		return 0, clientutil.Usage("--threads must be at least 1")
	}
	bootstrap := o.BrokerList
	if bootstrap == "" {
		if o.ZooKeeper == "" {
			return 0, clientutil.Usage("Missing required argument \"[broker-list]\"")
		}
		bs, err := consoleconsumer.BootstrapFromZooKeeper(o.ZooKeeper)
		if err != nil {
			return 0, err
		}
		bootstrap = bs
	}
	seeds, err := clientutil.ParseBootstrap("--broker-list", bootstrap)
	if err != nil {
		return 0, clientutil.Usage("%v", err)
	}
	props, err := clientutil.ParseProps("--property", o.Properties)
	if err != nil {
		return 0, clientutil.Usage("%v", err)
	}
	po, err := clientutil.ProducerOptions(clientutil.Merge(map[string]string{"client.id": "replay-log-producer"}, props))
	if err != nil {
		return 0, clientutil.Usage("%v", err)
	}
	po.Warn(stderr)

	// Where the input ends now: the replay stops there.
	admCl, err := kgo.NewClient(append(po.Security.Opts(), kgo.SeedBrokers(seeds...))...)
	if err != nil {
		return 0, err
	}
	adm := kadm.NewClient(admCl)
	defer adm.Close()
	starts, err := adm.ListStartOffsets(ctx, o.InputTopic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("listing offsets of %s: %w", o.InputTopic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, o.InputTopic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("listing offsets of %s: %w", o.InputTopic, err)
	}
	end := map[int32]int64{}
	assign := map[int32]kgo.Offset{}
	ends.Each(func(e kadm.ListedOffset) {
		if s, ok := starts.Lookup(e.Topic, e.Partition); ok && e.Offset > s.Offset {
			end[e.Partition] = e.Offset
			assign[e.Partition] = kgo.NewOffset().AtStart()
		}
	})
	if len(end) == 0 || o.Messages == 0 {
		return 0, nil
	}

	cons, err := kgo.NewClient(append(po.Security.Opts(), kgo.SeedBrokers(seeds...), kgo.ClientID("replay-log-producer"),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.InputTopic: assign}))...)
	if err != nil {
		return 0, err
	}
	defer cons.Close()
	prod, err := kgo.NewClient(append(po.Opts, kgo.SeedBrokers(seeds...), kgo.AllowAutoTopicCreation())...)
	if err != nil {
		return 0, err
	}
	defer prod.Close()

	var (
		mu       sync.Mutex
		firstErr error
	)
	promise := func(r *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = fmt.Errorf("producing to %s: %w", o.OutputTopic, err)
			}
			mu.Unlock()
		}
	}
	failed := func() error { mu.Lock(); defer mu.Unlock(); return firstErr }

	var produced int64
	for len(end) > 0 && (o.Messages < 0 || produced < o.Messages) && failed() == nil {
		pctx, cancel := context.WithTimeout(ctx, IdleTimeout)
		fs := cons.PollFetches(pctx)
		idle := pctx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			break
		}
		if ferr := clientutil.FetchError(fs); ferr != nil {
			return produced, ferr
		}
		recs := fs.Records()
		if len(recs) == 0 && idle {
			break // the rest of the input holds no records (markers, gaps)
		}
		for _, r := range recs {
			e, ok := end[r.Partition]
			if !ok || r.Offset >= e {
				continue
			}
			if r.Offset+1 >= e {
				delete(end, r.Partition)
			}
			out := &kgo.Record{Topic: o.OutputTopic, Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp}
			if o.Sync {
				promise(out, prod.ProduceSync(ctx, out).FirstErr())
			} else {
				prod.Produce(ctx, out, promise)
			}
			produced++
			if o.Messages >= 0 && produced >= o.Messages {
				break
			}
		}
	}
	if err := prod.Flush(ctx); err != nil && failed() == nil {
		return produced, fmt.Errorf("flushing: %w", err)
	}
	return produced, failed()
}
