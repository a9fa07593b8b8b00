package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// TestCLIConsumerGroupsAgainstBroker drives bin/kafka-consumer-groups.sh
// against a real broker: a 3-partition topic holds two batches of records
// with explicit timestamps (3 h and 1 h ago), a franz-go group member
// commits known offsets, and the tool's --list, --describe (offsets,
// --members, --state), every --reset-offsets plan (dry run and execute,
// whole topic and topic:0,2) and --delete are checked against exact
// values, the committed offsets through kadm.
func TestCLIConsumerGroupsAgainstBroker(t *testing.T) {
	const (
		topic  = "cg"
		group  = "cg-group"
		client = "cg-client"
	)
	b := harness.StartBroker(t, nil)
	bs := b.Addr()
	quickRaceExit(t)
	createTopic(t, b, topic, 3, nil)

	// Batch A (3 h ago) then batch B (1 h ago), partition by partition.
	base := time.Now().Truncate(time.Millisecond)
	tsA, tsB := base.Add(-3*time.Hour), base.Add(-time.Hour)
	countA := map[int32]int64{0: 4, 1: 3, 2: 5}
	countB := map[int32]int64{0: 2, 1: 4, 2: 1}
	end := map[int32]int64{0: 6, 1: 7, 2: 6}
	prod := b.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for bi, batch := range []struct {
		counts map[int32]int64
		ts     time.Time
	}{{countA, tsA}, {countB, tsB}} {
		var rs []*kgo.Record
		for p := int32(0); p < 3; p++ {
			for i := int64(0); i < batch.counts[p]; i++ {
				rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Timestamp: batch.ts, Value: []byte(fmt.Sprintf("batch%d-p%d-%d", bi, p, i))})
			}
		}
		if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce batch %d: %v", bi, err)
		}
	}

	// An active member (range balancer, known client id) reads everything
	// and commits offsets of our choosing.
	assigned := make(chan struct{}, 1)
	cons := b.Client(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(client),
		kgo.Balancers(kgo.RangeBalancer()), kgo.DisableAutoCommit(), kgo.FetchMaxWait(500*time.Millisecond),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}))
	pollRecords(ctx, t, cons, 19, "group member")
	select {
	case <-assigned:
	case <-ctx.Done():
		t.Fatal("no assignment")
	}
	commit := map[int32]int64{0: 2, 1: 5, 2: 6}
	toCommit := map[string]map[int32]kgo.EpochOffset{topic: {}}
	for p, o := range commit {
		toCommit[topic][p] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	var commitErr error
	cons.CommitOffsetsSync(ctx, toCommit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		commitErr = err
		if err == nil {
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					if rp.ErrorCode != 0 {
						commitErr = fmt.Errorf("commit %s/%d: error code %d", rt.Topic, rp.Partition, rp.ErrorCode)
					}
				}
			}
		}
	})
	if commitErr != nil {
		t.Fatal(commitErr)
	}
	memberID, _ := cons.GroupMetadata()
	if memberID == "" {
		t.Fatal("group member has no member id")
	}

	cg := func(args ...string) string {
		t.Helper()
		return binScript(t, "", "kafka-consumer-groups.sh", append([]string{"--bootstrap-server", bs}, args...)...)
	}
	// cgStreams is cg with stderr (Kafka's notices go there), exit 0.
	cgStreams := func(args ...string) (string, string) {
		t.Helper()
		code, out, errs := cliRun(t, nil, "kafka-consumer-groups.sh", append([]string{"--bootstrap-server", bs}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errs)
		}
		return out, errs
	}
	noMembers := "\nConsumer group '" + group + "' has no active members.\n"

	// --list holds just the group; --list --state says it is Stable.
	if out := cg("--list"); out != group+"\n" {
		t.Fatalf("--list: %q, want %q", out, group+"\n")
	}
	if rows := tableRows(t, cg("--list", "--state"), "GROUP STATE"); len(rows) != 1 || strings.Join(rows[0], " ") != group+" Stable" {
		t.Fatalf("--list --state rows: %q", rows)
	}

	// --describe: one row per partition with the member's identity. As in
	// Kafka, an Empty group's "has no active members." is on stderr.
	checkOffsets := func(args []string, active bool, cur map[int32]int64) {
		t.Helper()
		out, errs := cgStreams(args...)
		rows := tableRows(t, out, "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID")
		if len(rows) != 3 {
			t.Fatalf("describe: %d rows, want 3:\n%s", len(rows), out)
		}
		for i, f := range rows {
			p := int32(i)
			want := []string{group, topic, strconv.Itoa(i), strconv.FormatInt(cur[p], 10), strconv.FormatInt(end[p], 10), strconv.FormatInt(end[p]-cur[p], 10)}
			if len(f) != 9 || strings.Join(f[:6], " ") != strings.Join(want, " ") {
				t.Fatalf("describe row %d: %q, want %q + consumer columns:\n%s", i, f, want, out)
			}
			if active {
				if f[6] != memberID || !strings.Contains(f[7], "127.0.0.1") || f[8] != client {
					t.Fatalf("describe row %d consumer columns %q, want %s, a 127.0.0.1 host, %s", i, f[6:], memberID, client)
				}
			} else if strings.Join(f[6:], " ") != "- - -" {
				t.Fatalf("describe row %d of an empty group: consumer columns %q, want - - -", i, f[6:])
			}
		}
		if wantErrs := map[bool]string{false: noMembers}[active]; errs != wantErrs || strings.Contains(out, "no active members") {
			t.Fatalf("describe (active %v): stderr %q, want %q, and no notice on stdout:\n%s", active, errs, wantErrs, out)
		}
	}
	describe := []string{"--describe", "--group", group}
	checkOffsets(describe, true, commit)
	checkOffsets([]string{"--describe", "--offsets", "--group", group}, true, commit)

	// --describe --members [--verbose].
	out := cg("--describe", "--members", "--group", group)
	rows := tableRows(t, out, "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS")
	if len(rows) != 1 || len(rows[0]) != 5 || rows[0][0] != group || rows[0][1] != memberID || !strings.Contains(rows[0][2], "127.0.0.1") || rows[0][3] != client || rows[0][4] != "3" {
		t.Fatalf("--members rows %q (member %s):\n%s", rows, memberID, out)
	}
	// The whole tables, laid out by Kafka 3.9's format strings: GROUP,
	// TOPIC, CONSUMER-ID, HOST (and the members' CLIENT-ID) as wide as
	// their widest value, at least 15; the fixed columns as Kafka's.
	host := rows[0][2]
	w := func(s string) int { return max(15, len(s)) }
	wantOffsets := fmt.Sprintf("\n%-15s %-15s %-10s %-15s %-15s %-15s %-*s %-*s %s\n", "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", w(memberID), "CONSUMER-ID", w(host), "HOST", "CLIENT-ID")
	for p := int32(0); p < 3; p++ {
		wantOffsets += fmt.Sprintf("%-15s %-15s %-10d %-15d %-15d %-15d %-*s %-*s %s\n", group, topic, p, commit[p], end[p], end[p]-commit[p], w(memberID), memberID, w(host), host, client)
	}
	if out := cg(describe...); out != wantOffsets {
		t.Fatalf("--describe:\n%q\nwant\n%q", out, wantOffsets)
	}
	wantMembers := fmt.Sprintf("\n%-15s %-*s %-*s %-15s %-15s \n%-15s %-*s %-*s %-15s %-15d \n", "GROUP", w(memberID), "CONSUMER-ID", w(host), "HOST", "CLIENT-ID", "#PARTITIONS",
		group, w(memberID), memberID, w(host), host, client, 3)
	if out != wantMembers {
		t.Fatalf("--members:\n%q\nwant\n%q", out, wantMembers)
	}
	out = cg("--describe", "--members", "--verbose", "--group", group)
	rows = tableRows(t, out, "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS ASSIGNMENT")
	if len(rows) != 1 || len(rows[0]) != 6 || rows[0][4] != "3" || rows[0][5] != topic+"(0,1,2)" {
		t.Fatalf("--members --verbose rows %q:\n%s", rows, out)
	}

	// --describe --state while the member is active.
	coordinator := []string{fmt.Sprintf("127.0.0.1:%d", b.Port), "(0)"}
	out, errs := cgStreams("--describe", "--state", "--group", group)
	rows = tableRows(t, out, "GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS")
	if want := append(append([]string{group}, coordinator...), "range", "Stable", "1"); len(rows) != 1 || strings.Join(rows[0], " ") != strings.Join(want, " ") || errs != "" {
		t.Fatalf("--state rows %q, want %q:\n%s\nstderr %q", rows, want, out, errs)
	}
	// Kafka 3.9's "host:port  (id)" (two spaces) sizes the GROUP column.
	coord := fmt.Sprintf("127.0.0.1:%d  (0)", b.Port)
	if want := fmt.Sprintf("\n%-25s %-25s %-20s %-15s %s\n%-25s %-25s %-20s %-15s %d\n", "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS",
		group, coord, "range", "Stable", 1); out != want {
		t.Fatalf("--state:\n%q\nwant\n%q", out, want)
	}
	if out, want := cg("--list", "--state"), fmt.Sprintf("%-25s %-20s\n%-25s %-20s\n", "GROUP", "STATE", group, "Stable"); out != want {
		t.Fatalf("--list --state:\n%q\nwant\n%q", out, want)
	}

	// An active group can be neither reset nor deleted. Kafka's
	// resetOffsets reports the refusal with printError (stdout), prints
	// the header of an empty plan and exits 0.
	code, out, errs := cliRun(t, nil, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
	if want := "\nError: Assignments can only be reset if the group '" + group + "' is inactive, but the current state is Stable.\n" +
		fmt.Sprintf("\n%-30s %-30s %-10s %-15s\n", "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"); code != 0 || out != want || errs != "" {
		t.Fatalf("reset of an active group: exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errs)
	}
	// Kafka reports a failed deletion on stdout, with the admin client's
	// exception, and still exits 0.
	code, out, errs = cliRun(t, nil, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--delete", "--group", group)
	if want := "\nError: Deletion of some consumer groups failed:\n* Group '" + group +
		"' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.\n"; code != 0 || out != want || errs != "" {
		t.Fatalf("delete of an active group: exit %d\nstdout %q\nwant   %q\nstderr:\n%s", code, out, want, errs)
	}
	adm := kadm.NewClient(b.Client())
	committed := func() map[int32]int64 {
		t.Helper()
		fo, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatalf("fetch offsets: %v", err)
		}
		got := map[int32]int64{}
		for _, ps := range fo {
			for p, o := range ps {
				if o.Err != nil {
					t.Fatalf("fetch offsets %s/%d: %v", o.Topic, p, o.Err)
				}
				got[p] = o.At
			}
		}
		return got
	}
	if got := committed(); !sameOffsets(got, commit) {
		t.Fatalf("after the refused reset: committed %v, want %v", got, commit)
	}

	// The member leaves (Close sends LeaveGroup and waits for it).
	cons.Close()
	if rows := tableRows(t, cg("--list", "--state"), "GROUP STATE"); len(rows) != 1 || strings.Join(rows[0], " ") != group+" Empty" {
		t.Fatalf("--list --state after the member left: %q", rows)
	}
	checkOffsets(describe, false, commit)
	if out, errs := cgStreams("--describe", "--members", "--group", group); out != "" || errs != noMembers {
		t.Fatalf("--members of an empty group: stdout %q, stderr %q, want only %q on stderr", out, errs, noMembers)
	}
	// An Empty group has no protocol: Kafka leaves ASSIGNMENT-STRATEGY
	// blank; its printStates prints the no-members notice too.
	out, errs = cgStreams("--describe", "--state", "--group", group)
	rows = tableRows(t, out, "GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS")
	if want := append(append([]string{group}, coordinator...), "Empty", "0"); len(rows) != 1 || strings.Join(rows[0], " ") != strings.Join(want, " ") || errs != noMembers {
		t.Fatalf("--state of an empty group: %q, want %q:\n%s\nstderr %q, want %q", rows, want, out, errs, noMembers)
	}
	if lines := strings.Split(strings.Trim(out, "\n"), "\n"); len(lines) != 2 ||
		strings.TrimSpace(cell(lines[1], lines[0], "ASSIGNMENT-STRATEGY", "STATE")) != "" {
		t.Fatalf("--state of an empty group: the ASSIGNMENT-STRATEGY cell is not blank:\n%s", out)
	}

	// --reset-offsets: each plan as a dry run (prints the plan, commits
	// nothing; also the default without --dry-run/--execute) and executed
	// (commits exactly the plan, only on the selected partitions).
	cur := commit
	reset := func(want map[int32]int64, mode string, args ...string) {
		t.Helper()
		full := append([]string{"--reset-offsets", "--group", group}, args...)
		if mode != "" {
			full = append(full, mode)
		}
		code, out, errs := cliRun(t, nil, "kafka-consumer-groups.sh", append([]string{"--bootstrap-server", bs}, full...)...)
		// Without --dry-run or --execute Kafka warns, then only shows the plan.
		if wantErr := map[bool]string{true: warnNoExecute + "\n"}[mode == ""]; code != 0 || errs != wantErr {
			t.Fatalf("%v %q: exit %d, stderr %q, want %q", args, mode, code, errs, wantErr)
		}
		plan := map[int32]int64{}
		for _, f := range tableRows(t, out, "GROUP TOPIC PARTITION NEW-OFFSET") {
			if len(f) != 4 || f[0] != group || f[1] != topic {
				t.Fatalf("%v %s: plan row %q:\n%s", args, mode, f, out)
			}
			p, err1 := strconv.ParseInt(f[2], 10, 32)
			o, err2 := strconv.ParseInt(f[3], 10, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("%v %s: plan row %q:\n%s", args, mode, f, out)
			}
			plan[int32(p)] = o
		}
		if !sameOffsets(plan, want) {
			t.Fatalf("%v %s: plan %v, want %v:\n%s", args, mode, plan, want, out)
		}
		if mode == "--execute" {
			next := map[int32]int64{}
			for p, o := range cur {
				next[p] = o
			}
			for p, o := range want {
				next[p] = o
			}
			cur = next
		}
		if got := committed(); !sameOffsets(got, cur) {
			t.Fatalf("%v %s: committed %v, want %v", args, mode, got, cur)
		}
	}
	all := func(o0, o1, o2 int64) map[int32]int64 { return map[int32]int64{0: o0, 1: o1, 2: o2} }
	sel := func(o0, o2 int64) map[int32]int64 { return map[int32]int64{0: o0, 2: o2} }
	whole := func(args ...string) []string { return append([]string{"--topic", topic}, args...) }
	p02 := func(args ...string) []string { return append([]string{"--topic", topic + ":0,2"}, args...) }
	const dry, execute = "--dry-run", "--execute"
	// A timestamp between the batches, in UTC and in another zone.
	mid := base.Add(-2 * time.Hour)
	const iso = "2006-01-02T15:04:05.000Z07:00"
	midUTC, midPlus2 := mid.UTC().Format(iso), mid.In(time.FixedZone("", 2*3600)).Format(iso)
	beforeAll := tsA.Add(-time.Hour).UTC().Format(iso)

	reset(all(0, 0, 0), dry, whole("--to-earliest")...) // committed 2,5,6
	reset(all(0, 0, 0), "", whole("--to-earliest")...)  // no mode: a dry run
	reset(sel(0, 0), execute, p02("--to-earliest")...)  // → 0,5,0
	reset(all(6, 7, 6), dry, whole("--to-latest")...)   //
	reset(sel(6, 6), execute, p02("--to-latest")...)    // → 6,5,6
	reset(all(3, 3, 3), dry, whole("--to-offset", "3")...)
	reset(all(6, 7, 6), dry, whole("--to-offset", "100")...)   // clamped to the log end
	reset(all(5, 5, 5), execute, whole("--to-offset", "5")...) // → 5,5,5
	reset(all(3, 3, 3), dry, whole("--shift-by", "-2")...)
	reset(sel(3, 3), execute, p02("--shift-by", "-2")...)  // → 3,5,3
	reset(all(0, 1, 0), dry, whole("--shift-by", "-4")...) // clamped at the log start
	reset(all(4, 3, 5), dry, whole("--to-datetime", midUTC)...)
	reset(sel(4, 5), execute, p02("--to-datetime", midPlus2)...) // → 4,5,5
	reset(sel(0, 0), dry, p02("--to-datetime", beforeAll)...)
	reset(all(0, 0, 0), execute, "--all-topics", "--to-earliest") // → 0,0,0
	reset(all(4, 3, 5), dry, whole("--by-duration", "PT2H")...)
	reset(all(4, 3, 5), execute, whole("--by-duration", "PT2H")...) // → 4,3,5
	reset(all(6, 7, 6), dry, whole("--by-duration", "PT30M")...)    // after every record: the log end
	reset(all(0, 0, 0), dry, whole("--by-duration", "P1D")...)
	reset(all(6, 6, 6), execute, whole("--shift-by", "3")...) // 7,6,8 clamped → 6,6,6
	checkOffsets(describe, false, cur)

	// --delete: the group, its offsets and its --list line are gone.
	if out := cg("--delete", "--group", group); out != "Deletion of requested consumer groups ('"+group+"') was successful.\n" {
		t.Fatalf("--delete: %q", out)
	}
	if out := cg("--list"); out != "" {
		t.Fatalf("--list after --delete: %q", out)
	}
	if got := committed(); len(got) != 0 {
		t.Fatalf("offsets after --delete: %v", got)
	}
	// Kafka's printError (stdout, exit 0) for a group that does not exist.
	for _, view := range [][]string{nil, {"--members"}, {"--state"}} {
		out, errs := cgStreams(append(describe, view...)...)
		if want := "\nError: Consumer group '" + group + "' does not exist.\n"; out != want || errs != "" {
			t.Fatalf("--describe %v after --delete: stdout %q, want %q; stderr %q", view, out, want, errs)
		}
	}

	// --shift-by needs a committed offset to shift: the deleted group has
	// none, and Kafka refuses (exit 1) instead of shifting from the log end.
	code, out, errs = cliRun(t, nil, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--reset-offsets", "--group", group, "--topic", topic, "--shift-by", "1", "--execute")
	if want := "Error: Cannot shift offset for partition " + topic + "-0 since there is no current committed offset\n"; code != 1 || errs != want || out != "" {
		t.Fatalf("--shift-by without committed offsets: exit %d\nstdout %q\nstderr %q, want %q", code, out, errs, want)
	}
	if got := committed(); len(got) != 0 {
		t.Fatalf("offsets after the refused --shift-by: %v", got)
	}
}

// warnNoExecute is Kafka's warning for --reset-offsets without --dry-run
// or --execute (ConsumerGroupCommandOptions.checkArgs), verbatim: its two
// string literals join without a space after "missing.".
const warnNoExecute = "WARN: No action will be performed as the --execute option is missing.In a future major release, " +
	"the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. " +
	"You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting."

// cell is the text of row under header's column named col, up to the
// column named next (the table is left-aligned, so columns start where
// their header names do).
func cell(row, header, col, next string) string {
	from, to := strings.Index(header, col), strings.Index(header, next+" ")
	if from < 0 || to < from || len(row) < to {
		return "<no such column>"
	}
	return row[from:to]
}

// tableRows returns the fields of the lines after the line whose fields
// are header, up to the next blank line; it fails t when there is no such
// header line.
func tableRows(t *testing.T, out, header string) [][]string {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.Join(strings.Fields(l), " ") != header {
			continue
		}
		var rows [][]string
		for _, r := range lines[i+1:] {
			f := strings.Fields(r)
			if len(f) == 0 {
				break
			}
			rows = append(rows, f)
		}
		return rows
	}
	t.Fatalf("no header %q in:\n%s", header, out)
	return nil
}

func sameOffsets(a, b map[int32]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for p, o := range a {
		if x, ok := b[p]; !ok || x != o {
			return false
		}
	}
	return true
}
