package consumergroups

// The tables kafka-consumer-groups.sh prints, laid out as Kafka 3.9's
// ConsumerGroupCommand lays them out: Java printf columns ("%-Ns": the
// value, then spaces up to N; a longer value is not cut), the widths it
// computes from the rows, its fixed widths, and "-" for a missing value.
// Kafka 3.8/3.9 start every line with "\n" and so lose the line break
// after the last row (and, in --reset-offsets, between rows); Kafka fixed
// that in 4.0 (ConsumerGroupCommand "Fix broken output layout", #17058),
// giving back 2.8's bytes. These functions print 2.8/4.0's line breaks
// and 3.9's columns, so a table is 3.9's with each row on its own line.

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// missing is Kafka's MISSING_COLUMN_VALUE.
const missing = "-"

// jlen is s's length as Java's String.length counts it (UTF-16 code
// units): the measure Kafka's column widths and printf padding use.
func jlen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// pad is Java's "%-Ns": s, then spaces up to w; a longer s is not cut.
func pad(s string, w int) string {
	if n := jlen(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// offsetRow is one row of the offsets view (--describe, --offsets):
// Kafka's PartitionAssignmentState. CurrentOffset and LogEndOffset are
// nil when unknown (no committed offset; ListOffsets did not answer for
// the partition); ConsumerID, Host and ClientID are "" for a partition
// no member is assigned, printed "-".
type offsetRow struct {
	Group, Topic                string
	Partition                   int32
	CurrentOffset, LogEndOffset *int64
	ConsumerID, Host, ClientID  string
}

// optInt is Kafka's Optional<Long>.map(toString).orElse("-").
func optInt(v *int64) string {
	if v == nil {
		return missing
	}
	return strconv.FormatInt(*v, 10)
}

// lag is Kafka's getLag: log end minus the committed offset when both
// are known (and the committed offset is not -1), else "-".
func (r offsetRow) lag() string {
	if r.CurrentOffset == nil || *r.CurrentOffset == -1 || r.LogEndOffset == nil {
		return missing
	}
	return strconv.FormatInt(*r.LogEndOffset-*r.CurrentOffset, 10)
}

// writeOffsets is Kafka's printOffsets for one group: a blank line, the
// header, a row per partition. GROUP, TOPIC, CONSUMER-ID and HOST are as
// wide as their widest value, at least 15; PARTITION 10; the offsets and
// LAG 15; CLIENT-ID is last and not padded.
func writeOffsets(out io.Writer, rows []offsetRow) {
	g, t, c, h := 15, 15, 15, 15
	for _, r := range rows {
		g = max(g, jlen(r.Group))
		t = max(t, jlen(r.Topic))
		c = max(c, jlen(dash(r.ConsumerID)))
		h = max(h, jlen(dash(r.Host)))
	}
	line := func(group, topic, part, cur, end, lag, cons, host, cli string) {
		fmt.Fprintln(out, pad(group, g), pad(topic, t), pad(part, 10), pad(cur, 15), pad(end, 15), pad(lag, 15), pad(cons, c), pad(host, h), cli)
	}
	fmt.Fprintln(out)
	line("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	for _, r := range rows {
		line(r.Group, r.Topic, strconv.Itoa(int(r.Partition)), optInt(r.CurrentOffset), optInt(r.LogEndOffset), r.lag(), dash(r.ConsumerID), dash(r.Host), dash(r.ClientID))
	}
}

// memberRow is one row of --describe --members: Kafka's
// MemberAssignmentState. Assignment is the member's partitions (only
// printed with --verbose; #PARTITIONS counts them either way).
type memberRow struct {
	Group, ConsumerID, GroupInstanceID, Host, ClientID string
	Assignment                                         []tp
}

// writeMembers is Kafka's printMembers for one group: a blank line, the
// header, a row per member. Each column but #PARTITIONS is as wide as its
// widest value, at least 15 (GROUP-INSTANCE-ID 17, a column that is there
// only when some member has a group.instance.id); #PARTITIONS is 15 wide
// and followed by a space, then with --verbose the ASSIGNMENT.
func writeMembers(out io.Writer, rows []memberRow, verbose bool) {
	g, c, gi, h, cl := 15, 15, 17, 15, 15
	withInstance := false
	for _, r := range rows {
		g = max(g, jlen(r.Group))
		c = max(c, jlen(r.ConsumerID))
		gi = max(gi, jlen(r.GroupInstanceID))
		h = max(h, jlen(r.Host))
		cl = max(cl, jlen(r.ClientID))
		withInstance = withInstance || r.GroupInstanceID != ""
	}
	line := func(group, cons, inst, host, cli, n, assignment string) {
		cells := []string{pad(group, g), pad(cons, c)}
		if withInstance {
			cells = append(cells, pad(inst, gi))
		}
		cells = append(cells, pad(host, h), pad(cli, cl), pad(n, 15), "")
		io.WriteString(out, strings.Join(cells, " "))
		if verbose {
			io.WriteString(out, assignment)
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out)
	line("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT")
	for _, r := range rows {
		line(r.Group, r.ConsumerID, r.GroupInstanceID, r.Host, r.ClientID, strconv.Itoa(len(r.Assignment)), formatAssignment(r.Assignment))
	}
}

// formatAssignment is the ASSIGNMENT cell: "-" for none, else
// "topic(0,1,2), other(3)", topics in name order, partitions in number
// order (Kafka 2.8's printMembers). Kafka 3.8/3.9's Java port prints the
// partition lists without their topic names ("(0,1,2), (3)") and sorts
// the numbers as text; that loses which topic a partition is of, so the
// 2.8 form is kept.
func formatAssignment(tps []tp) string {
	if len(tps) == 0 {
		return missing
	}
	byTopic := map[string][]int{}
	for _, x := range tps {
		byTopic[x.topic] = append(byTopic[x.topic], int(x.partition))
	}
	cells := make([]string, 0, len(byTopic))
	for t, ps := range byTopic {
		sort.Ints(ps)
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = strconv.Itoa(p)
		}
		cells = append(cells, t+"("+strings.Join(s, ",")+")")
	}
	sort.Strings(cells)
	return strings.Join(cells, ", ")
}

// stateRow is --describe --state's one row: Kafka's GroupState.
type stateRow struct {
	Group              string
	CoordinatorHost    string
	CoordinatorPort    int32
	CoordinatorID      int32
	AssignmentStrategy string // the group's protocol; "" when it has none
	State              string
	Members            int
}

// writeState is Kafka's printStates for one group: a blank line, the
// header and the row. Kafka 3.9 writes the coordinator as "host:port
// (id)" with two spaces before the id, and sizes the first column (GROUP)
// by that coordinator text (at least 25); COORDINATOR (ID) is 25 wide,
// ASSIGNMENT-STRATEGY 20, STATE 15.
func writeState(out io.Writer, s stateRow) {
	coord := fmt.Sprintf("%s:%d  (%d)", s.CoordinatorHost, s.CoordinatorPort, s.CoordinatorID)
	w := max(25, jlen(coord))
	fmt.Fprintln(out)
	fmt.Fprintln(out, pad("GROUP", w), pad("COORDINATOR (ID)", 25), pad("ASSIGNMENT-STRATEGY", 20), pad("STATE", 15), "#MEMBERS")
	fmt.Fprintln(out, pad(s.Group, w), pad(coord, 25), pad(s.AssignmentStrategy, 20), pad(s.State, 15), s.Members)
}

// groupState is one group of --list --state.
type groupState struct{ Group, State string }

// writeGroupStates is Kafka 3.9's printGroupInfo with the STATE column:
// GROUP as wide as the widest group id (at least 15) plus 10, STATE 20,
// no blank line before the header.
func writeGroupStates(out io.Writer, groups []groupState) {
	w := 15
	for _, g := range groups {
		w = max(w, jlen(g.Group))
	}
	w += 10
	fmt.Fprintln(out, pad("GROUP", w), pad("STATE", 20))
	for _, g := range groups {
		fmt.Fprintln(out, pad(g.Group, w), pad(g.State, 20))
	}
}

// writeResetPlan is Kafka's printOffsetsToReset: when some group was
// planned (even with no partitions: a group that was not inactive), a
// blank line, the header and a row per new offset, GROUP and TOPIC 30
// wide, PARTITION 10, NEW-OFFSET 15.
func writeResetPlan(out io.Writer, plan []plannedOffset) {
	line := func(group, topic, part, off string) {
		fmt.Fprintln(out, pad(group, 30), pad(topic, 30), pad(part, 10), pad(off, 15))
	}
	fmt.Fprintln(out)
	line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
	for _, x := range plan {
		line(x.group, x.Topic, strconv.Itoa(int(x.Partition)), strconv.FormatInt(x.At, 10))
	}
}
