// Package transactions is `gregor transactions`, Kafka's
// kafka-transactions.sh (org.apache.kafka.tools.TransactionsCommand, KIP-664):
// list and describe transactions, describe a partition's active producers,
// find hanging transactions and abort them. It is a Kafka client (franz-go
// kadm, plus raw requests where kadm does not take the option), so it
// works against any broker serving ListTransactions (66),
// DescribeTransactions (65), DescribeProducers (61) and WriteTxnMarkers
// (27); against one that does not it fails with Kafka's "The node does not
// support …" message.
package transactions

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil"
)

// Options are one invocation's command line.
type Options struct {
	// BootstrapServer is --bootstrap-server (required): host:port[,…].
	BootstrapServer string
	// CommandConfig is --command-config: a properties file of admin
	// client settings ("" = none).
	CommandConfig string
	// Command is the sub-command: list, describe, describe-producers,
	// abort, find-hanging ("" = none given, a usage error).
	Command string
	// Flags are the sub-command's options as given, by name without the
	// dashes (e.g. "partition" → "0"); parsed and checked as Kafka's
	// argparse4j parser does (see Commands).
	Flags map[string]string
	// Now is the clock for transaction durations (default time.Now).
	Now func() time.Time
}

// Timeout bounds one command, connecting included, as the admin client's
// default.api.timeout.ms (60 s) does.
var Timeout = 60 * time.Second

// Main runs kafka-transactions.sh and returns its exit status: 0 on
// success; 1 with argparse4j's usage and "kafka-transactions.sh…: error: …"
// lines for a bad command line, or with Kafka's one-line message
// (printErrorAndExit) when the command fails. Tables go to stdout,
// errors to stderr.
func Main(ctx context.Context, o Options, stdout, stderr io.Writer) int {
	if o.Command == "" {
		return PrintUsageError(stderr, &UsageError{Msg: "too few arguments"})
	}
	a, err := parseArgs(o.Command, o.Flags)
	if err != nil {
		var ue *UsageError
		if errors.As(err, &ue) {
			return PrintUsageError(stderr, ue)
		}
		return clientutil.Report(stderr, "", err)
	}
	if o.BootstrapServer == "" {
		return PrintUsageError(stderr, &UsageError{Msg: "argument --bootstrap-server is required"})
	}
	var props map[string]string
	if o.CommandConfig != "" {
		if props, err = clientutil.LoadPropsFile(o.CommandConfig); err != nil {
			return clientutil.Report(stderr, "", failWith(err, "Failed to load admin client properties"))
		}
	}
	cl, err := clientutil.AdminKgoClient(o.BootstrapServer, props)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if o.Now == nil {
		o.Now = time.Now
	}
	t := &tool{cl: cl, adm: kadm.NewClient(cl), now: o.Now, out: stdout}
	return clientutil.Report(stderr, "", t.run(ctx, o.Command, a))
}

// tool is one command's clients and output.
type tool struct {
	cl  *kgo.Client
	adm *kadm.Client
	now func() time.Time
	out io.Writer
}

func (t *tool) run(ctx context.Context, command string, a args) error {
	switch command {
	case "list":
		return t.list(ctx, a)
	case "describe":
		return t.describe(ctx, a)
	case "describe-producers":
		return t.describeProducers(ctx, a)
	case "abort":
		return t.abort(ctx, a)
	case "find-hanging":
		return t.findHanging(ctx, a)
	}
	return fail("Unexpected command %s", command)
}

// apiNames are Kafka's ApiKeys names of the requests this tool sends, as
// its UnsupportedVersionException names them.
var apiNames = map[int16]string{
	27: "WRITE_TXN_MARKERS",
	61: "DESCRIBE_PRODUCERS",
	65: "DESCRIBE_TRANSACTIONS",
	66: "LIST_TRANSACTIONS",
}

// errUnsupported is a broker without the API (Java's
// UnsupportedVersionException from NodeApiVersions).
type errUnsupported struct {
	key  int16
	node int32
}

func (e *errUnsupported) Error() string { return "The node does not support " + apiNames[e.key] }

// require asks every broker for its API versions and fails, as Kafka's
// client does before sending, when one does not serve key at minVersion or
// above; it reports the lowest such node. Asking first keeps an
// unsupported API from turning into retries until the timeout (kgo would
// first look for a coordinator the broker cannot be). A broker that does
// not answer is left for the request itself to report.
func (t *tool) require(ctx context.Context, key, minVersion int16) error {
	vs, err := t.adm.ApiVersions(ctx)
	if err != nil {
		return err
	}
	for _, v := range vs.Sorted() {
		if v.Err != nil {
			continue
		}
		if max, ok := v.KeyMaxVersion(key); !ok || max < minVersion {
			return &errUnsupported{key: key, node: v.NodeID}
		}
	}
	return nil
}

// firstErr is a kadm call's error with *ShardErrors reduced to their
// first shard's error, which is what Kafka's future would fail with.
func firstErr(err error) error {
	var se *kadm.ShardErrors
	if errors.As(err, &se) && len(se.Errs) > 0 {
		return se.Errs[0].Err
	}
	return err
}
