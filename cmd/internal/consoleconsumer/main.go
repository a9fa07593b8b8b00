package consoleconsumer

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil"
	"gregor/replication/metastore"
)

// Options are kafka-console-consumer.sh's inputs.
type Options struct {
	BootstrapServer string
	ZooKeeper       string // --zookeeper host:port[/chroot]: the brokers are found under /brokers/ids (--bootstrap-server wins when both are given)
	Topic           string
	Include         string // --include / --whitelist: a regular expression of topics (instead of --topic)
	Group           string // --group; also group.id in --consumer-property
	Partition       int32  // --partition; -1 = all partitions
	Offset          string // --offset: earliest, latest or a non-negative number; "" = not given (latest, or earliest with --from-beginning)
	FromBeginning   bool
	MaxMessages     int   // --max-messages; -1 = unlimited
	TimeoutMs       int64 // --timeout-ms: exit when no record arrived for this long; -1 = never
	Properties      []string
	ConsumerProps   []string
	ConsumerConfig  string // --consumer.config file
	Formatter       string // --formatter class name; only the default formatter exists
	// DeleteConsumerOffsets is --delete-consumer-offsets (with --zookeeper
	// and a group): /consumers/<group> is deleted before consuming.
	DeleteConsumerOffsets bool
}

// pollChunk bounds the records taken per poll, so --max-messages never
// consumes (and, in a group, commits) records it does not print.
const pollChunk = 10000

// Main consumes and prints records to stdout until --max-messages records,
// --timeout-ms without a record, or ctx ends, then prints "Processed a
// total of N messages" on stderr. Exit status: 0 after a normal end
// (including the idle timeout, as Kafka); 1 with one line on stderr for bad
// arguments or a consume error (or when --zookeeper finds no broker).
// Ending ctx ends consumption the same way (commit, leave the group, the
// count); MainWithSignals ties that to SIGINT/SIGTERM for the binary.
func Main(ctx context.Context, o Options, stdout, stderr io.Writer) int {
	stderr = &lockedWriter{w: stderr}
	n, err := run(ctx, o, stdout, stderr)
	if n >= 0 {
		fmt.Fprintf(stderr, "Processed a total of %d messages\n", n)
	}
	return clientutil.Report(stderr, "ERROR ", err)
}

// run returns the number of records printed (-1 when consumption did not start).
func run(ctx context.Context, o Options, stdout, stderr io.Writer) (int, error) {
	cl, fm, group, watch, zc, err := setup(o, stderr)
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	if zc != nil {
		defer zc.close() // before cl.Close: the last commit, then the session
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()

	idle := time.Duration(o.TimeoutMs) * time.Millisecond
	noConn := &errNoConnection{bootstrap: o.BootstrapServer, timeout: idle}
	if o.Topic != "" {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if o.TimeoutMs >= 0 {
			cctx, cancel = context.WithTimeout(ctx, idle)
		}
		err := checkTopic(cctx, cl, o, watch)
		timedOut := err != nil && cctx.Err() != nil
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return 0, nil // interrupted
		case timedOut && !watch.everConnected():
			return 0, noConn
		case timedOut:
			return 0, nil // connected but no answer within --timeout-ms: nothing consumed
		case err != nil:
			return -1, clientutil.Usage("%v", err)
		}
	}
	if zc != nil {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if o.TimeoutMs >= 0 {
			cctx, cancel = context.WithTimeout(ctx, idle)
		}
		started, err := zc.start(cctx, cl)
		cancel()
		switch {
		case err != nil:
			return -1, err
		case !started: // interrupted, or --timeout-ms before the topic existed
			return 0, nil
		}
	}

	count := 0
	for o.MaxMessages < 0 || count < o.MaxMessages {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if o.TimeoutMs >= 0 {
			pollCtx, cancel = context.WithTimeout(ctx, idle)
		}
		want := pollChunk
		if o.MaxMessages >= 0 {
			want = min(want, o.MaxMessages-count)
		}
		fs := cl.PollRecords(pollCtx, want)
		cancel()
		// Print what the poll returned even when a signal ended it: in a
		// group those records count as consumed and are committed on
		// the way out, so dropping them here would lose them.
		recs := fs.Records()
		for _, r := range recs {
			fm.Write(out, r)
			count++
			if zc != nil {
				zc.mark(r.Partition, r.Offset)
			}
		}
		if err := out.Flush(); err != nil {
			return count, fmt.Errorf("Unable to write to standard out, closing consumer: %w", err)
		}
		if cl.Context().Err() != nil || ctx.Err() != nil {
			break
		}
		if ferr := clientutil.FetchError(fs); ferr != nil {
			return count, ferr
		}
		if len(recs) == 0 && pollCtx.Err() != nil {
			break // --timeout-ms passed without a record
		}
	}
	if count == 0 && ctx.Err() == nil && !watch.everConnected() {
		return 0, noConn
	}
	if group != "" {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.CommitUncommittedOffsets(cctx); err != nil {
			fmt.Fprintf(stderr, "WARN committing offsets for group %s: %v\n", group, err)
		}
	}
	return count, nil
}

// setup validates the options (Kafka's ConsoleConsumerOptions checks) and
// builds the client and formatter. With --zookeeper (and no
// --bootstrap-server) and a group it is the old consumer: its ZooKeeper
// state is the returned *zkConsumer (oldconsumer.go), kgo consumes
// partitions directly and no group coordinator is involved.
func setup(o Options, stderr io.Writer) (_ *kgo.Client, _ *Formatter, _ string, _ *connWatch, _ *zkConsumer, err error) {
	if o.BootstrapServer == "" && o.ZooKeeper == "" {
		return nil, nil, "", nil, nil, clientutil.Usage("Missing required argument \"[bootstrap-server]\"")
	}
	if (o.Topic == "") == (o.Include == "") {
		return nil, nil, "", nil, nil, clientutil.Usage("Exactly one of --include/--topic is required.")
	}
	if o.Formatter != "" && !strings.HasSuffix(o.Formatter, "DefaultMessageFormatter") {
		return nil, nil, "", nil, nil, clientutil.Usage("formatter %s is not available; only DefaultMessageFormatter", o.Formatter)
	}
	if o.Partition >= 0 && o.Topic == "" {
		return nil, nil, "", nil, nil, clientutil.Usage("The topic is required when partition is specified.")
	}
	if o.Offset != "" && o.Partition < 0 {
		return nil, nil, "", nil, nil, clientutil.Usage("The partition is required when offset is specified.")
	}
	if o.Offset != "" && o.FromBeginning {
		return nil, nil, "", nil, nil, clientutil.Usage("Options from-beginning and offset cannot be specified together.")
	}
	var zk metastore.Store // open while setup may still make the old consumer; closed on every other way out
	if o.BootstrapServer == "" {
		s, bs, err := openZooKeeper(o.ZooKeeper)
		if err != nil {
			return nil, nil, "", nil, nil, err
		}
		zk = s
		defer func() {
			if zk != nil {
				zk.Close()
			}
		}()
		o.BootstrapServer = bs
	}
	seeds, err := clientutil.ParseBootstrap("--bootstrap-server", o.BootstrapServer)
	if err != nil {
		return nil, nil, "", nil, nil, clientutil.Usage("%v", err)
	}
	fprops, err := clientutil.ParseProps("--property", o.Properties)
	if err != nil {
		return nil, nil, "", nil, nil, clientutil.Usage("%v", err)
	}
	fm, unknownF := NewFormatter(fprops)
	var file map[string]string
	if o.ConsumerConfig != "" {
		if file, err = clientutil.LoadPropsFile(o.ConsumerConfig); err != nil {
			return nil, nil, "", nil, nil, clientutil.Usage("%v", err)
		}
	}
	cp, err := clientutil.ParseProps("--consumer-property", o.ConsumerProps)
	if err != nil {
		return nil, nil, "", nil, nil, clientutil.Usage("%v", err)
	}
	props := consumerProps(o, file, cp)
	old := map[string]string{} // the old consumer's own keys (oldconsumer.go)
	for _, k := range oldConsumerProps {
		if v, ok := props[k]; ok {
			old[k] = v
			delete(props, k)
		}
	}
	co, err := clientutil.ConsumerOptions(props)
	if err != nil {
		return nil, nil, "", nil, nil, clientutil.Usage("%v", err)
	}
	warn := co
	warn.Ignored = nil
	for _, k := range append(unknownF, co.Ignored...) {
		if !strings.HasSuffix(k, ".deserializer") {
			warn.Ignored = append(warn.Ignored, k)
		}
	}
	warn.Warn(stderr)
	if co.Group != "" && o.Partition >= 0 {
		return nil, nil, "", nil, nil, clientutil.Usage("Options group and partition cannot be specified together.")
	}
	var zc *zkConsumer
	switch {
	case zk != nil && co.Group != "":
		for k, v := range props {
			old[k] = v
		}
		s := zk
		zk = nil // newZKConsumer owns it now
		if zc, err = newZKConsumer(s, o, co.Group, old, stderr); err != nil {
			return nil, nil, "", nil, nil, err
		}
		defer func() {
			if err != nil {
				zc.close()
			}
		}()
	case o.DeleteConsumerOffsets:
		return nil, nil, "", nil, nil, clientutil.Usage("--delete-consumer-offsets needs --zookeeper (without --bootstrap-server) and a group: it deletes the old consumer's /consumers/<group> in ZooKeeper")
	case len(old) > 0:
		return nil, nil, "", nil, nil, clientutil.Usage("%s: an old-consumer property, only with --zookeeper and a group", strings.Join(slices.Sorted(maps.Keys(old)), ", "))
	}

	opts := append(co.Opts, kgo.SeedBrokers(seeds...))
	switch {
	case zc != nil: // partitions added once known (zkConsumer.start)
	case o.Partition >= 0:
		off, err := parseOffset(o)
		if err != nil {
			return nil, nil, "", nil, nil, err
		}
		opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.Topic: {o.Partition: off}}))
	case o.Include != "":
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(o.Include))
	default:
		opts = append(opts, kgo.ConsumeTopics(o.Topic))
	}
	// Without a group the consumer reads every partition directly and
	// commits nothing (Kafka would join a throwaway console-consumer-N group).
	if co.Group != "" && zc == nil {
		opts = append(opts, kgo.ConsumerGroup(co.Group))
	}
	watch := newConnWatch(stderr, props["client.id"], co.Group)
	opts = append(opts, kgo.WithHooks(watch))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, "", nil, nil, err
	}
	if zc != nil {
		return cl, fm, "", watch, zc, nil // offsets go to ZooKeeper, not through kgo
	}
	return cl, fm, co.Group, watch, nil, nil
}

// consumerProps merges the consumer properties, lowest precedence first:
// ConsoleConsumer's defaults (client.id console-consumer, the assignors
// "range, cooperative-sticky"), the --consumer.config file,
// --consumer-property, then --group and --from-beginning.
func consumerProps(o Options, file, cp map[string]string) map[string]string {
	props := clientutil.Merge(map[string]string{
		"client.id":                     "console-consumer",
		"partition.assignment.strategy": "range,cooperative-sticky",
	}, file, cp)
	if o.Group != "" {
		props["group.id"] = o.Group
	}
	if o.FromBeginning {
		props["auto.offset.reset"] = "earliest"
	} else if props["auto.offset.reset"] == "" {
		props["auto.offset.reset"] = "latest"
	}
	return props
}

// parseOffset reads --offset (with --partition): earliest, latest, or a
// non-negative offset; absent = latest, or earliest with --from-beginning.
func parseOffset(o Options) (kgo.Offset, error) {
	switch strings.ToLower(o.Offset) {
	case "":
		if o.FromBeginning {
			return kgo.NewOffset().AtStart(), nil
		}
		return kgo.NewOffset().AtEnd(), nil
	case "earliest":
		return kgo.NewOffset().AtStart(), nil
	case "latest":
		return kgo.NewOffset().AtEnd(), nil
	}
	n, err := strconv.ParseInt(o.Offset, 10, 64)
	if err != nil || n < 0 {
		return kgo.Offset{}, clientutil.Usage("The provided offset value '%s' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.", o.Offset)
	}
	return kgo.NewOffset().At(n), nil
}
