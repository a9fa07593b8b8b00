// Package consumergroups is `gregor consumer-groups`, Kafka's
// kafka-consumer-groups.sh: list, describe (offsets, members, state),
// delete and reset the offsets of consumer groups. It is a Kafka client
// (franz-go kadm), so it works against any Kafka-compatible broker.
package consumergroups

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Options are the command's flags (kafka-consumer-groups.sh names).
type Options struct {
	BootstrapServer string
	List, Describe  bool
	Delete          bool
	ResetOffsets    bool
	Groups          []string // --group (repeatable)
	AllGroups       bool     // --all-groups
	Members         bool     // --members (with --describe)
	Verbose         bool     // --verbose (with --members)
	State           bool     // --state (with --describe or --list)
	Offsets         bool     // --offsets (with --describe; the default view)

	// --reset-offsets scope: Topics entries are "topic" or "topic:0,1,2".
	Topics    []string
	AllTopics bool
	// --reset-offsets plan: exactly one of these.
	ToEarliest bool
	ToLatest   bool
	ToCurrent  bool
	ToOffset   *int64
	ShiftBy    *int64
	ToDatetime string // yyyy-MM-ddTHH:mm:SS.sss[zone]
	ByDuration string // PnDTnHnMnS
	DryRun     bool
	Execute    bool
	// FromFile is --from-file: a --reset-offsets plan read from a CSV file
	// as --export writes it ("topic,partition,offset" lines for one
	// --group, "group,topic,partition,offset" otherwise).
	FromFile string
	// Export is --export: --reset-offsets prints the plan as CSV
	// (no header, one line per partition) instead of the table.
	Export bool

	// DeleteOffsets is --delete-offsets: delete one --group's committed
	// offsets of the --topic partitions (OffsetDelete, KIP-496).
	DeleteOffsets bool

	// Now is the clock for --by-duration (default time.Now).
	Now func() time.Time
}

// Check validates the combination of actions and options like Kafka's
// ConsumerGroupCommandOptions.checkArgs.
func (o *Options) Check() error {
	n := 0
	for _, b := range []bool{o.List, o.Describe, o.Delete, o.ResetOffsets, o.DeleteOffsets} {
		if b {
			n++
		}
	}
	if n != 1 {
		return errors.New("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets")
	}
	if o.BootstrapServer == "" {
		return errors.New("missing required argument \"[bootstrap-server]\"")
	}
	if (o.Describe || o.Delete || o.ResetOffsets) && len(o.Groups) == 0 && !o.AllGroups {
		return errors.New("option [describe|delete|reset-offsets] takes one of these options: [all-groups], [group]")
	}
	if o.DeleteOffsets {
		if len(o.Groups) == 0 || len(o.Topics) == 0 {
			return errors.New("Option [delete-offsets] takes the following options: [all-groups], [group]")
		}
		if o.AllGroups {
			return errors.New("Option \"[group]\" can't be used with option \"[all-groups]\"")
		}
		if len(o.Groups) > 1 {
			return errors.New("Found multiple arguments for option group, but you asked for only one")
		}
	}
	if o.Export && !o.ResetOffsets {
		return errors.New("Option [export] is only supported with [reset-offsets]")
	}
	if o.FromFile != "" && !o.ResetOffsets {
		return errors.New("Option [from-file] is only supported with [reset-offsets]")
	}
	if o.ResetOffsets && o.FromFile != "" && (len(o.Topics) > 0 || o.AllTopics) {
		return errors.New("Option [from-file] takes the partitions from the file: not with [topic] or [all-topics]")
	}
	if o.ResetOffsets {
		plans := 0
		for _, b := range []bool{o.ToEarliest, o.ToLatest, o.ToCurrent, o.ToOffset != nil, o.ShiftBy != nil, o.ToDatetime != "", o.ByDuration != "", o.FromFile != ""} {
			if b {
				plans++
			}
		}
		if plans != 1 {
			return errors.New("option [reset-offsets] takes exactly one reset specification: --to-earliest, --to-latest, --to-current, --to-offset, --shift-by, --to-datetime, --by-duration, --from-file")
		}
		if o.DryRun && o.Execute {
			return errors.New("option [reset-offsets] takes only one of these options: [dry-run], [execute]")
		}
		if len(o.Topics) == 0 && !o.AllTopics && o.FromFile == "" {
			return errors.New("option [reset-offsets] takes one of these options: [all-topics], [topic]")
		}
	}
	return nil
}

// Run executes the action against adm, printing like Kafka's tool: tables
// and the errors Kafka's printError reports (as "\nError: …", after which
// the command goes on and succeeds) on out, the notices Kafka writes to
// System.err (a group with no active members, or rebalancing) on errOut.
func Run(ctx context.Context, o Options, adm *kadm.Client, out, errOut io.Writer) error {
	if err := o.Check(); err != nil {
		return err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	groups := o.Groups
	if o.AllGroups && !o.List {
		ls, err := adm.ListGroups(ctx)
		if err != nil {
			return err
		}
		groups = ls.Groups()
		sort.Strings(groups)
	}
	switch {
	case o.List:
		return list(ctx, o, adm, out)
	case o.Delete:
		return deleteGroups(ctx, adm, groups, out)
	case o.DeleteOffsets:
		return deleteOffsets(ctx, adm, o.Groups[0], o.Topics, out)
	case o.ResetOffsets:
		// Kafka's resetOffsets then printOffsetsToReset: each group is
		// planned (and with --execute committed) in turn, a group that is
		// not inactive only gets an error line; then one table holds every
		// group's new offsets (its header even when no group has any).
		var fromFile map[string][]kadm.Offset
		if o.FromFile != "" {
			var err error
			if fromFile, err = readResetPlan(o.FromFile, len(o.Groups) == 1, o.Groups); err != nil {
				return err
			}
		}
		var plan []plannedOffset
		seen := map[string]bool{}
		for _, g := range groups {
			if seen[g] {
				continue
			}
			seen[g] = true
			p, err := resetOffsets(ctx, o, adm, g, fromFile, out)
			if err != nil {
				return err
			}
			plan = append(plan, p...)
		}
		if o.Export { // Kafka prints the CSV with println: a blank line after it
			_, err := fmt.Fprintln(out, exportCSV(plan, len(o.Groups) == 1))
			return err
		}
		if len(seen) == 0 {
			return nil
		}
		writeResetPlan(out, plan)
		return nil
	default:
		// Kafka describes the groups in name order (a TreeMap), once each.
		if !o.AllGroups {
			groups = slices.Compact(slices.Sorted(slices.Values(groups)))
		}
		for _, g := range groups {
			if err := describe(ctx, o, adm, g, out, errOut); err != nil {
				return err
			}
		}
		return nil
	}
}

// printError is Kafka's ConsumerGroupCommand.printError: the message,
// after an empty line and "Error: ", on stdout.
func printError(out io.Writer, format string, args ...any) {
	fmt.Fprintf(out, "\nError: "+format+"\n", args...)
}

// memberState is Kafka's shouldPrintMemberState for a described group in
// state: a Dead group (one that does not exist) is an error on out and
// false (nothing else is printed for it); an Empty group's "has no active
// members." and a rebalancing group's warning go to errOut, and the
// caller then prints its table if it has rows.
func memberState(out, errOut io.Writer, group, state string) bool {
	switch state {
	case "Dead":
		printError(out, "Consumer group '%s' does not exist.", group)
		return false
	case "Empty":
		fmt.Fprintf(errOut, "\nConsumer group '%s' has no active members.\n", group)
	case "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling":
		fmt.Fprintf(errOut, "\nWarning: Consumer group '%s' is rebalancing.\n", group)
	}
	return true
}

func list(ctx context.Context, o Options, adm *kadm.Client, out io.Writer) error {
	ls, err := adm.ListGroups(ctx)
	if err != nil {
		return err
	}
	sorted := ls.Sorted()
	if !o.State {
		for _, g := range sorted {
			fmt.Fprintln(out, g.Group)
		}
		return nil
	}
	gs := make([]groupState, len(sorted))
	for i, g := range sorted {
		gs[i] = groupState{g.Group, g.State}
	}
	writeGroupStates(out, gs)
	return nil
}

// deleteGroups prints Kafka's --delete report on out. As in Kafka's
// ConsumerGroupCommand.deleteGroups, a group that could not be deleted is
// reported, not returned: the command still succeeds (Kafka exits 0), and
// the groups that were deleted are named after the failures.
func deleteGroups(ctx context.Context, adm *kadm.Client, groups []string, out io.Writer) error {
	rs, err := adm.DeleteGroups(ctx, groups...)
	if err != nil && len(rs) == 0 {
		return err
	}
	var ok, failed []string
	for _, g := range slices.Compact(slices.Sorted(slices.Values(groups))) {
		r, answered := rs[g]
		switch {
		case !answered && err != nil:
			// The group's coordinator did not answer (a failed shard).
			failed = append(failed, fmt.Sprintf("* Group '%s' could not be deleted due to: %v", g, err))
		case r.Err != nil:
			failed = append(failed, fmt.Sprintf("* Group '%s' could not be deleted due to: %s", g, javaError(r.Err)))
		default:
			ok = append(ok, "'"+g+"'")
		}
	}
	if len(failed) == 0 {
		fmt.Fprintf(out, "Deletion of requested consumer groups (%s) was successful.\n", strings.Join(ok, ", "))
		return nil
	}
	fmt.Fprintln(out, "\nError: Deletion of some consumer groups failed:")
	for _, f := range failed {
		fmt.Fprintln(out, f)
	}
	if len(ok) > 0 {
		fmt.Fprintf(out, "\nThese consumer groups were deleted successfully: %s\n", strings.Join(ok, ", "))
	}
	return nil
}

// javaErrors are the exceptions Kafka's admin client fails a group
// deletion with, printed as Java's Throwable.toString: class name, ": ",
// the error's default message.
var javaErrors = map[int16]string{
	kerr.NonEmptyGroup.Code:            "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.",
	kerr.GroupIDNotFound.Code:          "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.",
	kerr.InvalidGroupID.Code:           "org.apache.kafka.common.errors.InvalidGroupIdException: The configured groupId is invalid.",
	kerr.GroupAuthorizationFailed.Code: "org.apache.kafka.common.errors.GroupAuthorizationException: Group authorization failed.",
}

// javaError is err as Kafka's tool prints it (javaErrors), else err's text.
func javaError(err error) string {
	if ke, ok := errors.AsType[*kerr.Error](err); ok {
		if s, ok := javaErrors[ke.Code]; ok {
			return s
		}
	}
	return err.Error()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func describe(ctx context.Context, o Options, adm *kadm.Client, group string, out, errOut io.Writer) error {
	ds, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return err
	}
	d, ok := ds[group]
	if !ok {
		return fmt.Errorf("consumer group '%s' not described", group)
	}
	if d.Err != nil {
		return fmt.Errorf("describing group '%s': %w", group, d.Err)
	}
	if d.State == "Dead" {
		memberState(out, errOut, group, d.State)
		return nil
	}
	switch {
	case o.State:
		// ASSIGNMENT-STRATEGY is the protocol DescribeGroups names, printed
		// as is: a group that is not Stable has none, and Kafka's 2.x/3.x
		// printStates leaves the column blank (only 4.0's prints "-").
		// Kafka's printStates counts one row, so the table always follows
		// the notice.
		memberState(out, errOut, group, d.State)
		writeState(out, stateRow{
			Group: group, CoordinatorHost: d.Coordinator.Host, CoordinatorPort: d.Coordinator.Port, CoordinatorID: d.Coordinator.NodeID,
			AssignmentStrategy: d.Protocol, State: d.State, Members: len(d.Members),
		})
		return nil
	case o.Members:
		if memberState(out, errOut, group, d.State); len(d.Members) == 0 {
			return nil
		}
		rows := make([]memberRow, 0, len(d.Members))
		for _, m := range d.Members {
			inst := ""
			if m.InstanceID != nil {
				inst = *m.InstanceID
			}
			rows = append(rows, memberRow{Group: group, ConsumerID: m.MemberID, GroupInstanceID: inst, Host: m.ClientHost, ClientID: m.ClientID, Assignment: memberPartitions(m)})
		}
		writeMembers(out, rows, o.Verbose)
		return nil
	}
	// The offsets view (default, --offsets).
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return err
	}
	cur := func(k tp) *int64 {
		if r, ok := committed.Lookup(k.topic, k.partition); ok && r.Err == nil {
			return &r.At
		}
		return nil
	}
	// Kafka's collectGroupsOffsets: the members with partitions, most
	// partitions first, each member's partitions by number; then the
	// partitions with a committed offset that no member has, by number.
	// (Kafka 3.9 then passes each member's rows through a HashMap, so its
	// order within a member is unspecified; topic breaks ties here.)
	members := slices.Clone(d.Members)
	slices.SortStableFunc(members, func(a, b kadm.DescribedGroupMember) int {
		return len(memberPartitions(b)) - len(memberPartitions(a))
	})
	var rows []offsetRow
	assigned := map[tp]bool{}
	for _, m := range members {
		tps := byPartition(memberPartitions(m))
		for _, x := range tps {
			assigned[x] = true
			rows = append(rows, offsetRow{Group: group, Topic: x.topic, Partition: x.partition, CurrentOffset: cur(x), ConsumerID: m.MemberID, Host: m.ClientHost, ClientID: m.ClientID})
		}
	}
	var unassigned []tp
	for t, ps := range committed {
		for p, r := range ps {
			if k := (tp{t, p}); r.Err == nil && !assigned[k] {
				unassigned = append(unassigned, k)
			}
		}
	}
	for _, x := range byPartition(unassigned) {
		rows = append(rows, offsetRow{Group: group, Topic: x.topic, Partition: x.partition, CurrentOffset: cur(x)})
	}
	if len(rows) == 0 {
		memberState(out, errOut, group, d.State)
		return nil
	}
	topics := map[string]bool{}
	for _, r := range rows {
		topics[r.Topic] = true
	}
	ends, err := adm.ListEndOffsets(ctx, slices.Sorted(maps.Keys(topics))...)
	if err != nil {
		return err
	}
	for i, r := range rows {
		if e, ok := ends.Lookup(r.Topic, r.Partition); ok && e.Err == nil {
			rows[i].LogEndOffset = &e.Offset
		}
	}
	memberState(out, errOut, group, d.State)
	writeOffsets(out, rows)
	return nil
}

// byPartition sorts tps by partition number, then topic (Kafka sorts a
// member's partitions by number only).
func byPartition(tps []tp) []tp {
	slices.SortFunc(tps, func(a, b tp) int {
		if a.partition != b.partition {
			return int(a.partition) - int(b.partition)
		}
		return strings.Compare(a.topic, b.topic)
	})
	return tps
}

type tp struct {
	topic     string
	partition int32
}

func memberPartitions(m kadm.DescribedGroupMember) []tp {
	a, ok := m.Assigned.AsConsumer()
	if !ok {
		return nil
	}
	var out []tp
	for _, t := range a.Topics {
		for _, p := range t.Partitions {
			out = append(out, tp{t.Topic, p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].partition < out[j].partition
	})
	return out
}

var durationRE = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// ParseISODuration parses the PnDTnHnMnS form of --by-duration.
func ParseISODuration(s string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(s)))
	if m == nil || s == "P" || strings.HasSuffix(strings.ToUpper(s), "T") {
		return 0, fmt.Errorf("invalid duration %q: expected PnDTnHnMnS", s)
	}
	var d time.Duration
	for i, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute} {
		if m[i+1] != "" {
			n, _ := strconv.ParseInt(m[i+1], 10, 64)
			d += time.Duration(n) * unit
		}
	}
	if m[4] != "" {
		f, _ := strconv.ParseFloat(m[4], 64)
		d += time.Duration(f * float64(time.Second))
	}
	return d, nil
}

// ParseDatetime parses --to-datetime: yyyy-MM-ddTHH:mm:SS.sss with an
// optional zone (Z, +hh:mm, +hhmm); no zone means local time, as Kafka.
func ParseDatetime(s string) (time.Time, error) {
	layouts := []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05.000", "2006-01-02T15:04:05"}
	for _, l := range layouts {
		if strings.Contains(l, "Z07") {
			if t, err := time.Parse(l, s); err == nil {
				return t, nil
			}
			continue
		}
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid datetime %q: expected yyyy-MM-ddTHH:mm:SS.sss[zone]", s)
}
