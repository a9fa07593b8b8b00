package consumergroups

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runMain runs the command as `gregor consumer-groups` does: exit status,
// stdout, stderr.
func runMain(t *testing.T, o Options) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), o, nil, &out, &errb)
	return code, out.String(), errb.String()
}

func committedAt(t *testing.T, adm *kadm.Client, group string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fo, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32]int64{}
	for _, ps := range fo {
		for p, o := range ps {
			got[p] = o.At
		}
	}
	return got
}

// --reset-offsets without --dry-run or --execute: Kafka's WARN line on
// stderr (verbatim, its missing space included), then a dry run.
func TestResetWithoutModeWarnsAndDryRuns(t *testing.T) {
	adm, addr := cluster(t)
	base := Options{BootstrapServer: addr, ResetOffsets: true, Groups: []string{"g"}, Topics: []string{"t"}, ToEarliest: true}
	code, out, errs := runMain(t, base)
	if code != 0 || errs != ResetWithoutExecuteWarning+"\n" {
		t.Fatalf("exit %d, stderr %q, want exactly Kafka's WARN line", code, errs)
	}
	if !strings.Contains(ResetWithoutExecuteWarning, "option is missing.In a future major release,") {
		t.Fatal("the WARN text lost Kafka's wording")
	}
	if rows := fields(out); len(rows) != 4 || strings.Join(rows[1], " ") != "g t 0 0" {
		t.Fatalf("plan:\n%s", out)
	}
	if got := committedAt(t, adm, "g"); got[0] != 4 || got[1] != 5 || got[2] != 6 {
		t.Fatalf("a reset without --execute committed: %v", got)
	}
	for _, mode := range []Options{{DryRun: true}, {Execute: true}} {
		o := base
		o.DryRun, o.Execute = mode.DryRun, mode.Execute
		if code, _, errs := runMain(t, o); code != 0 || errs != "" {
			t.Fatalf("dry-run %v execute %v: exit %d, stderr %q", o.DryRun, o.Execute, code, errs)
		}
	}
	if got := committedAt(t, adm, "g"); got[0] != 0 || got[1] != 0 || got[2] != 0 {
		t.Fatalf("--execute did not commit: %v", got)
	}
}

// --shift-by needs a committed offset on every partition it shifts: like
// Kafka's resetByShiftBy it refuses (exit 1) and commits nothing, rather
// than shifting from the log end.
func TestShiftByWithoutCommittedOffset(t *testing.T) {
	adm, addr := cluster(t)
	ctx := context.Background()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "t", Partition: 0, At: 8, LeaderEpoch: -1})
	if rs, err := adm.CommitOffsets(ctx, "partial", os); err != nil || rs.Error() != nil {
		t.Fatalf("commit: %v %v", err, rs.Error())
	}
	shift := int64(-2)
	o := Options{BootstrapServer: addr, ResetOffsets: true, Groups: []string{"partial"}, Topics: []string{"t"}, ShiftBy: &shift, Execute: true}
	code, out, errs := runMain(t, o)
	if code != 1 || errs != "Error: Cannot shift offset for partition t-1 since there is no current committed offset\n" || out != "" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if got := committedAt(t, adm, "partial"); len(got) != 1 || got[0] != 8 {
		t.Fatalf("a refused shift committed: %v", got)
	}
	// Only the committed partition: shifted.
	o.Topics = []string{"t:0"}
	if code, out, errs := runMain(t, o); code != 0 || errs != "" || len(fields(out)) != 2 || strings.Join(fields(out)[1], " ") != "partial t 0 6" {
		t.Fatalf("shift of a committed partition: exit %d\n%s%s", code, out, errs)
	}
	if got := committedAt(t, adm, "partial"); got[0] != 6 {
		t.Fatalf("after shift: %v", got)
	}
}

// --describe --state of an Empty group: DescribeGroups names no protocol,
// and the ASSIGNMENT-STRATEGY cell stays blank as in Kafka's printStates.
func TestDescribeStateOfEmptyGroup(t *testing.T) {
	adm, addr := cluster(t)
	out, err := run(t, adm, Options{BootstrapServer: addr, Describe: true, State: true, Groups: []string{"g"}})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("--state:\n%s", out)
	}
	col := strings.Index(lines[0], "ASSIGNMENT-STRATEGY")
	state := strings.Index(lines[0], "STATE ")
	if col < 0 || state < col || len(lines[1]) < state || strings.TrimSpace(lines[1][col:state]) != "" || !strings.HasPrefix(lines[1][state:], "Empty") {
		t.Fatalf("--state of an Empty group: want a blank ASSIGNMENT-STRATEGY under its header:\n%s", out)
	}
	if f := strings.Fields(lines[1]); len(f) != 5 || f[0] != "g" || f[3] != "Empty" || f[4] != "0" {
		t.Fatalf("--state row %q", lines[1])
	}
}

// --delete of a group that has members or does not exist: Kafka prints
// the failures (Java's exception text) and the groups that were deleted,
// on stdout, and exits 0.
func TestDeleteFailureReport(t *testing.T) {
	adm, addr := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "t", Partition: 0, At: 1, LeaderEpoch: -1})
	if rs, err := adm.CommitOffsets(ctx, "gone", os); err != nil || rs.Error() != nil {
		t.Fatalf("commit: %v %v", err, rs.Error())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("live"), kgo.ConsumeTopics("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for n := 0; n < 30; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("consumer did not get records")
		}
		n += len(fs.Records())
	}
	code, out, errs := runMain(t, Options{BootstrapServer: addr, Delete: true, Groups: []string{"live", "gone", "never"}})
	want := "\nError: Deletion of some consumer groups failed:\n" +
		"* Group 'live' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.\n" +
		"* Group 'never' could not be deleted due to: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.\n" +
		"\nThese consumer groups were deleted successfully: 'gone'\n"
	if code != 0 || out != want || errs != "" {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errs)
	}
	// Every group failing: no "deleted successfully" line.
	code, out, _ = runMain(t, Options{BootstrapServer: addr, Delete: true, Groups: []string{"live"}})
	if want := "\nError: Deletion of some consumer groups failed:\n" +
		"* Group 'live' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.\n"; code != 0 || out != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q", code, out, want)
	}
}
