package transactions

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"gregor/cmd/internal/clientutil/clienttest"
)

func runTool(t *testing.T, o Options) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), o, &out, &errb)
	return code, out.String(), errb.String()
}

// Command lines Kafka's tool rejects, with its exact messages and exit
// status 1; none of them needs a broker (the address is never dialled).
func TestCommandLineErrors(t *testing.T) {
	const bs = "127.0.0.1:1"
	usage := func(cmd string) string { return usageLine(cmd) + "\n" }
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no command", Options{BootstrapServer: bs}, usage("") + "kafka-transactions.sh: error: too few arguments\n"},
		{"unknown command", Options{BootstrapServer: bs, Command: "commit"},
			usage("") + "kafka-transactions.sh: error: argument COMMAND: invalid choice: 'commit' (choose from 'list', 'describe', 'describe-producers', 'abort', 'find-hanging')\n"},
		{"describe-producers without topic", Options{BootstrapServer: bs, Command: "describe-producers", Flags: map[string]string{"partition": "0"}},
			"usage: kafka-transactions.sh describe-producers [-h] [--broker-id BROKER_ID] --topic TOPIC --partition PARTITION\n" +
				"kafka-transactions.sh describe-producers: error: argument --topic is required\n"},
		{"describe-producers without partition", Options{BootstrapServer: bs, Command: "describe-producers", Flags: map[string]string{"topic": "foo"}},
			usage("describe-producers") + "kafka-transactions.sh describe-producers: error: argument --partition is required\n"},
		{"describe without id", Options{BootstrapServer: bs, Command: "describe"},
			"usage: kafka-transactions.sh describe [-h] --transactional-id TRANSACTIONAL_ID\n" +
				"kafka-transactions.sh describe: error: argument --transactional-id is required\n"},
		{"abort without topic", Options{BootstrapServer: bs, Command: "abort", Flags: map[string]string{"partition": "0", "start-offset": "9990"}},
			usage("abort") + "kafka-transactions.sh abort: error: argument --topic is required\n"},
		{"abort without partition", Options{BootstrapServer: bs, Command: "abort", Flags: map[string]string{"topic": "foo", "start-offset": "9990"}},
			usage("abort") + "kafka-transactions.sh abort: error: argument --partition is required\n"},
		{"partition not a number", Options{BootstrapServer: bs, Command: "abort", Flags: map[string]string{"topic": "foo", "partition": "x"}},
			usage("abort") + "kafka-transactions.sh abort: error: argument --partition: could not convert 'x' to Integer (For input string: \"x\")\n"},
		{"producer epoch past a short", Options{BootstrapServer: bs, Command: "abort", Flags: map[string]string{"topic": "foo", "partition": "0", "producer-id": "1", "producer-epoch": "40000"}},
			usage("abort") + "kafka-transactions.sh abort: error: argument --producer-epoch: could not convert '40000' to Short (For input string: \"40000\")\n"},
		{"unknown option", Options{BootstrapServer: bs, Command: "list", Flags: map[string]string{"topic": "foo"}},
			usage("list") + "kafka-transactions.sh list: error: unrecognized arguments: '--topic'\n"},
		{"no bootstrap server", Options{Command: "list"}, usage("") + "kafka-transactions.sh: error: argument --bootstrap-server is required\n"},
		{"abort without start offset or producer id", Options{BootstrapServer: bs, Command: "abort", Flags: map[string]string{"topic": "foo", "partition": "0"}},
			"The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)\n"},
		{"abort without producer epoch", Options{BootstrapServer: bs, Command: "abort", Flags: map[string]string{"topic": "foo", "partition": "0", "producer-id": "12345"}},
			"Missing required argument --producer-epoch\n"},
		{"abort without coordinator epoch", Options{BootstrapServer: bs, Command: "abort", Flags: map[string]string{"topic": "foo", "partition": "0", "producer-id": "12345", "producer-epoch": "15"}},
			"Missing required argument --coordinator-epoch\n"},
		{"find-hanging without scope", Options{BootstrapServer: bs, Command: "find-hanging"},
			"The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search\n"},
		{"find-hanging partition without topic", Options{BootstrapServer: bs, Command: "find-hanging", Flags: map[string]string{"broker-id": "1", "partition": "0"}},
			"The --partition argument requires --topic to be provided\n"},
		{"find-hanging bad timeout", Options{BootstrapServer: bs, Command: "find-hanging", Flags: map[string]string{"broker-id": "1", "max-transaction-timeout": "15m"}},
			usage("find-hanging") + "kafka-transactions.sh find-hanging: error: argument --max-transaction-timeout: could not convert '15m' to Integer (For input string: \"15m\")\n"},
		{"command config unreadable", Options{BootstrapServer: bs, Command: "list", CommandConfig: filepath.Join(t.TempDir(), "missing.properties")},
			"Failed to load admin client properties: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runTool(t, tc.o)
			if code != 1 || out != "" {
				t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, out)
			}
			if strings.HasSuffix(tc.want, ": ") {
				if !strings.HasPrefix(errs, tc.want) || !strings.HasSuffix(errs, ". Enable debug logging for additional detail.\n") {
					t.Fatalf("stderr %q, want %q…", errs, tc.want)
				}
				return
			}
			if errs != tc.want {
				t.Fatalf("stderr\n%q\nwant\n%q", errs, tc.want)
			}
		})
	}
}

// Every command against a broker that serves the transaction APIs
// (kfake): a transactional producer leaves a transaction open on t-1; the
// tool lists and describes it, describes the partition's producers, finds
// it not hanging while its coordinator has it and hanging once the
// coordinator does not know it, then aborts it by start offset, which
// releases the partition's last stable offset.
func TestCommandsAgainstKfake(t *testing.T) {
	c, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Two committed records first, so the open transaction starts at 2.
	clienttest.Produce(t, addr, &kgo.Record{Topic: "t", Partition: 1, Value: []byte("a")}, &kgo.Record{Topic: "t", Partition: 1, Value: []byte("b")})
	pr, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("tx-open"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if err := pr.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := pr.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 1, Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	base := Options{BootstrapServer: addr}
	run := func(command string, flags map[string]string, now time.Time) [][]string {
		t.Helper()
		o := base
		o.Command, o.Flags = command, flags
		o.Now = func() time.Time { return now }
		code, out, errs := runTool(t, o)
		if code != 0 || errs != "" {
			t.Fatalf("%s %v: exit %d, stderr %q", command, flags, code, errs)
		}
		var rows [][]string
		if out == "" {
			return nil
		}
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if !strings.HasSuffix(l, "\t") {
				t.Fatalf("%s: line %q does not end with Kafka's tab", command, l)
			}
			cells := strings.Split(strings.TrimSuffix(l, "\t"), "\t")
			for i := range cells {
				cells[i] = strings.TrimRight(cells[i], " ")
			}
			rows = append(rows, cells)
		}
		return rows
	}
	now := time.Now()

	rows := run("list", nil, now)
	if len(rows) != 2 || strings.Join(rows[0], " ") != strings.Join(listHeaders, " ") || rows[1][0] != "tx-open" || rows[1][3] != "Ongoing" {
		t.Fatalf("list: %v", rows)
	}
	pid := rows[1][2]
	// --duration-filter is the broker's (ListTransactions v1): an hour
	// filters out the transaction opened just now, -1 filters nothing.
	if rows := run("list", map[string]string{"duration-filter": "3600000"}, now); len(rows) != 1 {
		t.Fatalf("list --duration-filter 3600000: %v, want only the headers", rows)
	}
	if rows := run("list", map[string]string{"duration-filter": "-1"}, now); len(rows) != 2 || rows[1][0] != "tx-open" {
		t.Fatalf("list --duration-filter -1: %v", rows)
	}

	rows = run("describe", map[string]string{"transactional-id": "tx-open"}, now)
	if len(rows) != 2 || rows[1][1] != "tx-open" || rows[1][2] != pid || rows[1][4] != "Ongoing" || rows[1][5] != "60000" || rows[1][8] != "t-1" {
		t.Fatalf("describe: %v", rows)
	}

	rows = run("describe-producers", map[string]string{"topic": "t", "partition": "1"}, now)
	var open []string
	for _, r := range rows[1:] {
		if r[0] == pid {
			open = r
		}
	}
	if strings.Join(rows[0], " ") != strings.Join(producersHeaders, " ") || open == nil || open[5] != "2" {
		t.Fatalf("describe-producers: %v (want producer %s with its transaction at offset 2)", rows, pid)
	}
	if ts, err := strconv.ParseInt(open[4], 10, 64); err != nil || ts < before-10_000 || ts > time.Now().UnixMilli() {
		t.Fatalf("describe-producers LastTimestamp %q, want about %d (the open write)", open[4], before)
	}

	// Twenty minutes on, the transaction is past the default 15 minute
	// timeout but its coordinator still has t-1 in it: not hanging.
	rows = run("find-hanging", map[string]string{"topic": "t"}, now.Add(20*time.Minute))
	if len(rows) != 1 || strings.Join(rows[0], " ") != strings.Join(hangingHeaders, " ") {
		t.Fatalf("find-hanging: %v, want only the headers", rows)
	}

	// Once the coordinator no longer knows the transactional id (its
	// DescribeTransactions answer replaced for one request), the open
	// transaction on t-1 hangs: found through --broker-id 0's replicas.
	c.ControlKey(65, func(kr kmsg.Request) (kmsg.Response, error, bool) {
		req := kr.(*kmsg.DescribeTransactionsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		for _, id := range req.TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.ErrorCode = id, kerr.TransactionalIDNotFound.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp, nil, true
	})
	rows = run("find-hanging", map[string]string{"broker-id": "0"}, now.Add(20*time.Minute))
	if len(rows) != 2 || len(rows[1]) != 8 {
		t.Fatalf("find-hanging --broker-id 0: %v, want one hanging transaction", rows)
	}
	if h := rows[1]; h[0] != "t" || h[1] != "1" || h[2] != pid || h[3] != open[1] || h[4] != open[2] || h[5] != "2" || h[6] != open[4] || h[7] != "20" {
		t.Fatalf("hanging row %v, want t 1 %s %s %s 2 %s 20", h, pid, open[1], open[2], open[4])
	}
	// With a longer timeout than its age it is not a candidate.
	if rows := run("find-hanging", map[string]string{"topic": "t", "partition": "1", "max-transaction-timeout": "30"}, now.Add(20*time.Minute)); len(rows) != 1 {
		t.Fatalf("find-hanging --max-transaction-timeout 30: %v, want only the headers", rows)
	}

	if lso := lastStable(ctx, t, addr, "t", 1); lso != 2 {
		t.Fatalf("last stable offset %d before the abort, want 2 (the open transaction's start)", lso)
	}
	if rows := run("abort", map[string]string{"topic": "t", "partition": "1", "start-offset": "2"}, now); rows != nil {
		t.Fatalf("abort printed %v", rows)
	}
	// The ABORT marker went to t-1 (offset 3), which releases the last
	// stable offset to the log end. (kfake keeps answering
	// DescribeProducers from its coordinator's view, so that is not what
	// is checked here.)
	if lso := lastStable(ctx, t, addr, "t", 1); lso != 4 {
		t.Fatalf("last stable offset %d after the abort, want 4 (past the marker)", lso)
	}
	rows = run("describe-producers", map[string]string{"topic": "t", "partition": "1", "broker-id": "0"}, now)
	if len(rows) < 1 || strings.Join(rows[0], " ") != strings.Join(producersHeaders, " ") {
		t.Fatalf("describe-producers --broker-id 0: %v", rows)
	}

	// No transaction starts at offset 1.
	o := base
	o.Command, o.Flags = "abort", map[string]string{"topic": "t", "partition": "1", "start-offset": "1"}
	code, _, errs := runTool(t, o)
	if code != 1 || errs != "Could not find any open transactions starting at offset 1 on partition t-1\n" {
		t.Fatalf("abort at 1: exit %d, stderr %q", code, errs)
	}
	o.Command, o.Flags = "describe-producers", map[string]string{"topic": "t", "partition": "7"}
	code, _, errs = runTool(t, o)
	// Kafka's text ends with the error's own period and then its ".".
	if code != 1 || errs != "Failed to describe producers for partition t-7 on leader: This server does not host this topic-partition.. Enable debug logging for additional detail.\n" {
		t.Fatalf("describe-producers of a partition that does not exist: exit %d, stderr %q", code, errs)
	}
	o.Command, o.Flags = "describe", map[string]string{"transactional-id": "nope"}
	code, _, errs = runTool(t, o)
	if code != 1 || errs != "Failed to describe transaction state of transactional-id `nope`: DescribeTransactions request for transactionalId `nope` failed because the ID could not be found. Enable debug logging for additional detail.\n" {
		t.Fatalf("describe unknown id: exit %d, stderr %q", code, errs)
	}
}

// Against a broker without the transaction admin APIs (as Gregor before
// they are served), each command fails at once with Kafka's message naming
// the API, exit 1.
func TestUnsupportedAPIs(t *testing.T) {
	vs := kversion.Stable()
	for _, k := range []int16{27, 61, 65, 66} {
		vs.SetMaxKeyVersion(k, -1)
	}
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "t"), kfake.MaxVersions(vs))
	for _, tc := range []struct {
		command string
		flags   map[string]string
		want    string
	}{
		{"list", nil, "Failed to list transactions: The node does not support LIST_TRANSACTIONS"},
		{"describe", map[string]string{"transactional-id": "x"}, "Failed to describe transaction state of transactional-id `x`: The node does not support DESCRIBE_TRANSACTIONS"},
		{"describe-producers", map[string]string{"topic": "t", "partition": "0"}, "Failed to describe producers for partition t-0 on leader: The node does not support DESCRIBE_PRODUCERS"},
		{"abort", map[string]string{"topic": "t", "partition": "0", "start-offset": "0"}, "Failed to validate producer state for partition t-0: The node does not support DESCRIBE_PRODUCERS"},
		{"find-hanging", map[string]string{"topic": "t"}, "Failed to describe producers for 1 partitions on broker Optional.empty: The node does not support DESCRIBE_PRODUCERS"},
		{"find-hanging", map[string]string{"broker-id": "0"}, "Failed to describe producers for 1 partitions on broker Optional[0]: The node does not support DESCRIBE_PRODUCERS"},
		{"abort", map[string]string{"topic": "t", "partition": "0", "producer-id": "1", "producer-epoch": "0", "coordinator-epoch": "3"},
			"Failed to abort transaction AbortTransactionSpec(topicPartition=t-0, producerId=1, producerEpoch=0, coordinatorEpoch=3): The node does not support WRITE_TXN_MARKERS"},
	} {
		t.Run(tc.command, func(t *testing.T) {
			code, out, errs := runTool(t, Options{BootstrapServer: addr, Command: tc.command, Flags: tc.flags})
			if code != 1 || out != "" || errs != tc.want+". Enable debug logging for additional detail.\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
			}
		})
	}
}

// lastStable is t-p's last stable offset (ListOffsets latest, read_committed).
func lastStable(ctx context.Context, t *testing.T, addr, topic string, p int32) int64 {
	t.Helper()
	return latestOffset(ctx, t, addr, topic, p, 1)
}

// latestOffset is ListOffsets latest for t-p at isolation (0 the log end,
// 1 the last stable offset).
func latestOffset(ctx context.Context, t *testing.T, addr, topic string, p int32, isolation int8) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp = p, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("ListOffsets: %+v", resp)
	}
	return resp.Topics[0].Partitions[0].Offset
}

// abort's pre-3.0 form writes the marker it is given (coordinator epoch -1
// raised to 0, as Kafka does); a partition that does not exist and a topic
// find-hanging cannot describe fail with Kafka's messages.
func TestAbortByProducerIDAndMissingTopics(t *testing.T) {
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	byID := func(topic string) map[string]string {
		return map[string]string{"topic": topic, "partition": "0", "producer-id": "5", "producer-epoch": "1", "coordinator-epoch": "-1"}
	}
	if code, out, errs := runTool(t, Options{BootstrapServer: addr, Command: "abort", Flags: byID("t")}); code != 0 || out != "" || errs != "" {
		t.Fatalf("abort --producer-id: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if end := latestOffset(ctx, t, addr, "t", 0, 0); end != 1 {
		t.Fatalf("t-0 ends at %d after the abort, want 1 (the ABORT marker)", end)
	}
	for _, tc := range []struct {
		command string
		flags   map[string]string
		want    string
	}{
		{"abort", byID("nope"), "Failed to abort transaction AbortTransactionSpec(topicPartition=nope-0, producerId=5, producerEpoch=1, coordinatorEpoch=0): This server does not host this topic-partition.. Enable debug logging for additional detail.\n"},
		{"find-hanging", map[string]string{"topic": "nope"}, "Failed to describe 1 topics: This server does not host this topic-partition.. Enable debug logging for additional detail.\n"},
	} {
		code, out, errs := runTool(t, Options{BootstrapServer: addr, Command: tc.command, Flags: tc.flags})
		if code != 1 || out != "" || errs != tc.want {
			t.Errorf("%s %v: exit %d, stdout %q, stderr %q\nwant %q", tc.command, tc.flags, code, out, errs, tc.want)
		}
	}
}

// A duration filter needs ListTransactions v1 (KIP-994): against a v0
// broker the tool refuses, as Kafka's client does, instead of listing
// every transaction unfiltered.
func TestDurationFilterNeedsV1(t *testing.T) {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(66, 0)
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.MaxVersions(vs))
	code, out, errs := runTool(t, Options{BootstrapServer: addr, Command: "list", Flags: map[string]string{"duration-filter": "0"}})
	want := "Failed to list transactions: Duration filter can be set only when using API version 1 or higher. If client is connected to an older broker, do not specify duration filter or set duration filter to -1.. Enable debug logging for additional detail.\n"
	if code != 1 || out != "" || errs != want {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Without a filter (or with a negative one) v0 serves.
	if code, out, errs := runTool(t, Options{BootstrapServer: addr, Command: "list", Flags: map[string]string{"duration-filter": "-1"}}); code != 0 || out != "TransactionalId\tCoordinator\tProducerId\tTransactionState\t\n" || errs != "" {
		t.Fatalf("list on v0: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// --command-config properties reach the admin client: a valid file is
// used, a bad value is refused with the property's message, not ignored.
func TestCommandConfig(t *testing.T) {
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1))
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.properties"), filepath.Join(dir, "bad.properties")
	if err := os.WriteFile(good, []byte("client.id=txn-tool\nrequest.timeout.ms=5000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("request.timeout.ms=soon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runTool(t, Options{BootstrapServer: addr, CommandConfig: good, Command: "list"}); code != 0 || errs != "" || !strings.HasPrefix(out, "TransactionalId") {
		t.Fatalf("good config: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, out, errs := runTool(t, Options{BootstrapServer: addr, CommandConfig: bad, Command: "list"}); code != 1 || out != "" || !strings.Contains(errs, "request.timeout.ms") {
		t.Fatalf("bad config: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
