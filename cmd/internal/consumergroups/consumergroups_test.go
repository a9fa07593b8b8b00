package consumergroups

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil/clienttest"
)

// cluster starts an in-process kfake broker on 127.0.0.1 with topic "t"
// (3 partitions) holding 10 records per partition, and group "g" having
// committed offsets 4, 5, 6.
func cluster(t *testing.T) (*kadm.Client, string) {
	t.Helper()
	_, addr := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(3, "t"))
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for p := int32(0); p < 3; p++ {
		for i := 0; i < 10; i++ {
			r := &kgo.Record{Topic: "t", Partition: p, Value: []byte("v")}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	adm := kadm.NewClient(cl)
	os := kadm.Offsets{}
	for p := int32(0); p < 3; p++ {
		os.Add(kadm.Offset{Topic: "t", Partition: p, At: int64(4 + p), LeaderEpoch: -1})
	}
	rs, err := adm.CommitOffsets(ctx, "g", os)
	if err != nil || rs.Error() != nil {
		t.Fatalf("commit: %v %v", err, rs.Error())
	}
	return adm, addr
}

// run runs o against adm and returns stdout (runStreams: and stderr).
func run(t *testing.T, adm *kadm.Client, o Options) (string, error) {
	t.Helper()
	out, _, err := runStreams(t, adm, o)
	return out, err
}

func runStreams(t *testing.T, adm *kadm.Client, o Options) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	err := Run(ctx, o, adm, &out, &errb)
	return out.String(), errb.String(), err
}

func fields(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	return rows
}

func TestListDescribeResetDelete(t *testing.T) {
	adm, addr := cluster(t)
	out, err := run(t, adm, Options{BootstrapServer: addr, List: true})
	if err != nil || strings.TrimSpace(out) != "g" {
		t.Fatalf("list: %q %v", out, err)
	}
	out, errs, err := runStreams(t, adm, Options{BootstrapServer: addr, Describe: true, Groups: []string{"g"}})
	if err != nil {
		t.Fatal(err)
	}
	// The whole table, as Kafka 3.9 pads it; Kafka's "has no active
	// members." on stderr.
	want := "\n" +
		"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n" +
		"g               t               0          4               10              6               -               -               -\n" +
		"g               t               1          5               10              5               -               -               -\n" +
		"g               t               2          6               10              4               -               -               -\n"
	if out != want {
		t.Fatalf("describe:\n%s\nwant\n%s", out, want)
	}
	if errs != "\nConsumer group 'g' has no active members.\n" || strings.Contains(out, "no active members") {
		t.Errorf("the 'no active members' line belongs on stderr alone:\nstdout %q\nstderr %q", out, errs)
	}

	// Dry run changes nothing.
	shift := int64(-3)
	out, err = run(t, adm, Options{BootstrapServer: addr, ResetOffsets: true, Groups: []string{"g"}, Topics: []string{"t:0,2"}, ShiftBy: &shift})
	if err != nil {
		t.Fatal(err)
	}
	if want := "\n" +
		"GROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n" +
		"g                              t                              0          1              \n" +
		"g                              t                              2          3              \n"; out != want {
		t.Fatalf("dry run:\n%s\nwant\n%s", out, want)
	}
	ctx := context.Background()
	if fo, _ := adm.FetchOffsets(ctx, "g"); fo["t"][0].At != 4 {
		t.Fatalf("dry run committed: %v", fo["t"][0].At)
	}
	// Execute: to-earliest on all partitions, to-offset clamped.
	if _, err = run(t, adm, Options{BootstrapServer: addr, ResetOffsets: true, Groups: []string{"g"}, Topics: []string{"t"}, ToEarliest: true, Execute: true}); err != nil {
		t.Fatal(err)
	}
	fo, _ := adm.FetchOffsets(ctx, "g")
	for p := int32(0); p < 3; p++ {
		if fo["t"][p].At != 0 {
			t.Fatalf("to-earliest p%d = %d", p, fo["t"][p].At)
		}
	}
	big := int64(999)
	if _, err = run(t, adm, Options{BootstrapServer: addr, ResetOffsets: true, Groups: []string{"g"}, Topics: []string{"t:1"}, ToOffset: &big, Execute: true}); err != nil {
		t.Fatal(err)
	}
	if fo, _ := adm.FetchOffsets(ctx, "g"); fo["t"][1].At != 10 || fo["t"][0].At != 0 {
		t.Fatalf("to-offset clamp: p1=%d p0=%d", fo["t"][1].At, fo["t"][0].At)
	}
	// --by-duration far in the past: every record is newer → earliest.
	if out, err = run(t, adm, Options{BootstrapServer: addr, ResetOffsets: true, Groups: []string{"g"}, Topics: []string{"t:1"}, ByDuration: "P1D"}); err != nil || !strings.Contains(out, "g t 1 0") && fields(out)[1][3] != "0" {
		t.Fatalf("by-duration: %q %v", out, err)
	}

	// --state of the Empty group: the notice too (Kafka's printStates), then the table.
	out, errs, err = runStreams(t, adm, Options{BootstrapServer: addr, Describe: true, State: true, Groups: []string{"g"}})
	if err != nil || !strings.Contains(out, "Empty") || errs != "\nConsumer group 'g' has no active members.\n" {
		t.Fatalf("state: %q %q %v", out, errs, err)
	}
	out, err = run(t, adm, Options{BootstrapServer: addr, Delete: true, Groups: []string{"g"}})
	if err != nil || !strings.Contains(out, "Deletion of requested consumer groups ('g') was successful.") {
		t.Fatalf("delete: %q %v", out, err)
	}
	out, err = run(t, adm, Options{BootstrapServer: addr, List: true})
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("list after delete: %q %v", out, err)
	}
}

// Kafka's shouldPrintMemberState, state by state: a Dead group (Kafka's
// brokers describe a group that does not exist as Dead; kfake answers
// GROUP_ID_NOT_FOUND instead, so the CLI test against Gregor's broker
// covers that path end to end) is printError's line on stdout and nothing
// more; Empty and rebalancing groups get a notice on stderr, then their
// table.
func TestMemberState(t *testing.T) {
	for _, c := range []struct {
		state, out, errs string
		table            bool
	}{
		{"Dead", "\nError: Consumer group 'g' does not exist.\n", "", false},
		{"Empty", "", "\nConsumer group 'g' has no active members.\n", true},
		{"PreparingRebalance", "", "\nWarning: Consumer group 'g' is rebalancing.\n", true},
		{"CompletingRebalance", "", "\nWarning: Consumer group 'g' is rebalancing.\n", true},
		{"Stable", "", "", true},
	} {
		var out, errb bytes.Buffer
		if table := memberState(&out, &errb, "g", c.state); table != c.table || out.String() != c.out || errb.String() != c.errs {
			t.Errorf("%s: table %v, stdout %q, stderr %q; want %v, %q, %q", c.state, table, out.String(), errb.String(), c.table, c.out, c.errs)
		}
	}
}

func TestDescribeMembersOfActiveGroup(t *testing.T) {
	adm, addr := cluster(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("live"), kgo.ConsumeTopics("t"), kgo.ClientID("me"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for n := 0; n < 30; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("consumer did not get records")
		}
		n += len(fs.Records())
	}
	out, err := run(t, adm, Options{BootstrapServer: addr, Describe: true, Members: true, Verbose: true, Groups: []string{"live"}})
	if err != nil {
		t.Fatal(err)
	}
	rows := fields(out)
	if len(rows) != 2 || rows[1][0] != "live" || rows[1][3] != "me" || rows[1][4] != "3" || rows[1][5] != "t(0,1,2)" {
		t.Fatalf("members:\n%s", out)
	}
	// An active group cannot be reset: Kafka's printError on stdout, then
	// the (empty) table of new offsets, and exit 0. The other group
	// named is still reset, in the same table.
	code, out, errs := runMain(t, Options{BootstrapServer: addr, ResetOffsets: true, Groups: []string{"live", "g"}, Topics: []string{"t:0"}, ToLatest: true, Execute: true})
	want := "\nError: Assignments can only be reset if the group 'live' is inactive, but the current state is Stable.\n"
	if code != 0 || errs != "" || !strings.HasPrefix(out, want) {
		t.Fatalf("reset of an active group: exit %d\nstdout %q, want it to start with %q\nstderr %q", code, out, want, errs)
	}
	if rows := fields(strings.TrimPrefix(out, want)); len(rows) != 2 || strings.Join(rows[0], " ") != "GROUP TOPIC PARTITION NEW-OFFSET" || strings.Join(rows[1], " ") != "g t 0 10" {
		t.Fatalf("reset table:\n%s", out)
	}
	if got := committedAt(t, adm, "g"); got[0] != 10 {
		t.Fatalf("the inactive group was not reset: %v", got)
	}
	// The active group alone: the header, no rows.
	code, out, errs = runMain(t, Options{BootstrapServer: addr, ResetOffsets: true, Groups: []string{"live"}, Topics: []string{"t"}, ToLatest: true, Execute: true})
	if code != 0 || errs != "" || out != want+"\nGROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n" {
		t.Fatalf("reset of an active group alone: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
}

func TestCheckAndParsers(t *testing.T) {
	bad := []Options{
		{BootstrapServer: "x:1"},
		{BootstrapServer: "x:1", List: true, Delete: true},
		{BootstrapServer: "x:1", Describe: true},
		{BootstrapServer: "x:1", ResetOffsets: true, Groups: []string{"g"}, Topics: []string{"t"}},
		{BootstrapServer: "x:1", ResetOffsets: true, Groups: []string{"g"}, ToLatest: true},
		{List: true},
	}
	for i, o := range bad {
		if err := o.Check(); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	for s, want := range map[string]time.Duration{"P1D": 24 * time.Hour, "PT1H30M": 90 * time.Minute, "P1DT2H3M4S": 26*time.Hour + 3*time.Minute + 4*time.Second, "PT0.5S": 500 * time.Millisecond} {
		if d, err := ParseISODuration(s); err != nil || d != want {
			t.Errorf("ParseISODuration(%s) = %v, %v", s, d, err)
		}
	}
	for _, s := range []string{"", "P", "1D", "PT"} {
		if _, err := ParseISODuration(s); err == nil {
			t.Errorf("ParseISODuration(%q) accepted", s)
		}
	}
	ts, err := ParseDatetime("2024-03-01T10:00:00.000Z")
	if err != nil || ts.UnixMilli() != 1709287200000 {
		t.Errorf("ParseDatetime = %v %v", ts, err)
	}
	if _, err := parseTopicSpec("t:1,x"); err == nil {
		t.Error("bad partition list accepted")
	}
}
