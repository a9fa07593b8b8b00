package consumergroups

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"gregor/cmd/internal/clientutil"
)

// topicSpec is one --topic value: "t" (all partitions) or "t:0,1,2".
type topicSpec struct {
	topic      string
	partitions []int32 // nil = all
}

func parseTopicSpec(s string) (topicSpec, error) {
	t, ps, ok := strings.Cut(s, ":")
	spec := topicSpec{topic: strings.TrimSpace(t)}
	if spec.topic == "" {
		return spec, fmt.Errorf("invalid --topic %q", s)
	}
	if !ok {
		return spec, nil
	}
	for _, p := range strings.Split(ps, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil || n < 0 {
			return spec, fmt.Errorf("invalid partition %q in --topic %q", p, s)
		}
		spec.partitions = append(spec.partitions, int32(n))
	}
	return spec, nil
}

// plannedOffset is one row of the --reset-offsets table.
type plannedOffset struct {
	group string
	kadm.Offset
}

// resetOffsets plans (and with --execute commits) new offsets for group
// and returns the plan. Like Kafka, only an inactive group (Empty or
// unknown) may be reset: for another one it prints Kafka's error line on
// out and returns no plan and no error (Kafka goes on and exits 0).
// With fromFile (--from-file) the group's partitions and offsets are the
// file's, clamped to each partition's range; a group the file has no
// lines for gets Kafka's "No reset plan for group g found" error line.
func resetOffsets(ctx context.Context, o Options, adm *kadm.Client, group string, fromFile map[string][]kadm.Offset, out io.Writer) ([]plannedOffset, error) {
	ds, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return nil, err
	}
	if d, ok := ds[group]; ok && d.Err == nil && d.State != "Empty" && d.State != "Dead" {
		printError(out, "Assignments can only be reset if the group '%s' is inactive, but the current state is %s.", group, d.State)
		return nil, nil
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	var specs []topicSpec
	fileOffsets := map[tp]int64{}
	if fromFile != nil {
		entries, ok := fromFile[group]
		if !ok {
			printError(out, "No reset plan for group %s found", group)
			return nil, nil
		}
		byTopic := map[string]*topicSpec{}
		for _, e := range entries {
			if byTopic[e.Topic] == nil {
				byTopic[e.Topic] = &topicSpec{topic: e.Topic, partitions: []int32{}}
			}
			if _, dup := fileOffsets[tp{e.Topic, e.Partition}]; !dup {
				byTopic[e.Topic].partitions = append(byTopic[e.Topic].partitions, e.Partition)
			}
			fileOffsets[tp{e.Topic, e.Partition}] = e.At // a later line wins, as in Kafka's map
		}
		for _, t := range slices.Sorted(maps.Keys(byTopic)) {
			specs = append(specs, *byTopic[t])
		}
	} else if o.AllTopics {
		for t := range committed {
			specs = append(specs, topicSpec{topic: t})
		}
	} else {
		for _, s := range o.Topics {
			spec, err := parseTopicSpec(s)
			if err != nil {
				return nil, err
			}
			specs = append(specs, spec)
		}
	}
	topics := map[string]bool{}
	for _, s := range specs {
		topics[s.topic] = true
	}
	names := slices.Sorted(maps.Keys(topics))
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return nil, err
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, err
	}
	var after kadm.ListedOffsets
	switch {
	case o.ToDatetime != "":
		ts, err := ParseDatetime(o.ToDatetime)
		if err != nil {
			return nil, err
		}
		if after, err = adm.ListOffsetsAfterMilli(ctx, ts.UnixMilli(), names...); err != nil {
			return nil, err
		}
	case o.ByDuration != "":
		d, err := ParseISODuration(o.ByDuration)
		if err != nil {
			return nil, err
		}
		if after, err = adm.ListOffsetsAfterMilli(ctx, o.Now().Add(-d).UnixMilli(), names...); err != nil {
			return nil, err
		}
	}
	var plan []plannedOffset
	for _, s := range specs {
		parts := s.partitions
		if parts == nil {
			for p, e := range ends[s.topic] {
				if e.Err == nil {
					parts = append(parts, p)
				}
			}
			if len(parts) == 0 {
				return nil, fmt.Errorf("topic '%s' does not exist or has no partitions", s.topic)
			}
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
		for _, p := range parts {
			start, sok := starts.Lookup(s.topic, p)
			end, eok := ends.Lookup(s.topic, p)
			if !sok || !eok || start.Err != nil || end.Err != nil {
				return nil, fmt.Errorf("partition %s-%d does not exist", s.topic, p)
			}
			lo, hi := start.Offset, end.Offset
			clamp := func(x int64) int64 {
				if x < lo {
					return lo
				}
				if x > hi {
					return hi
				}
				return x
			}
			cur := int64(-1)
			if c, ok := committed.Lookup(s.topic, p); ok && c.Err == nil {
				cur = c.At
			}
			var target int64
			switch {
			case o.ToEarliest:
				target = lo
			case o.ToLatest:
				target = hi
			case o.ToCurrent:
				target = hi
				if cur >= 0 {
					target = cur
				}
			case o.ToOffset != nil:
				target = clamp(*o.ToOffset)
			case fromFile != nil:
				target = clamp(fileOffsets[tp{s.topic, p}])
			case o.ShiftBy != nil:
				// Kafka's resetByShiftBy has nothing to shift from and
				// refuses (IllegalArgumentException: usage error, exit 1);
				// no group is left half reset, since nothing was committed yet.
				if cur < 0 {
					return nil, clientutil.Usage("Cannot shift offset for partition %s-%d since there is no current committed offset", s.topic, p)
				}
				target = clamp(cur + *o.ShiftBy)
			default: // datetime / duration
				target = hi
				if a, ok := after.Lookup(s.topic, p); ok && a.Err == nil && a.Offset >= 0 {
					target = clamp(a.Offset)
				}
			}
			plan = append(plan, plannedOffset{group, kadm.Offset{Topic: s.topic, Partition: p, At: target, LeaderEpoch: -1}})
		}
	}
	if o.Execute {
		os := kadm.Offsets{}
		for _, x := range plan {
			os.Add(x.Offset)
		}
		rs, err := adm.CommitOffsets(ctx, group, os)
		if err != nil {
			return nil, err
		}
		if err := rs.Error(); err != nil {
			return nil, fmt.Errorf("committing new offsets of group '%s': %w", group, err)
		}
	}
	return plan, nil
}

// exportCSV is Kafka's exportOffsetsToCsv (--export): a line per planned
// offset, "topic,partition,offset" when one --group was given, else
// "group,topic,partition,offset"; no header. Values with a ',' '"' or line
// break are quoted as Jackson's CSV writer quotes them.
func exportCSV(plan []plannedOffset, singleGroup bool) string {
	var b strings.Builder
	for _, x := range plan {
		if !singleGroup {
			b.WriteString(csvField(x.group) + ",")
		}
		fmt.Fprintf(&b, "%s,%d,%d\n", csvField(x.Topic), x.Partition, x.At)
	}
	return b.String()
}

func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// readResetPlan reads --from-file: as Kafka's parseResetPlan, with one
// --group a file whose first line is "topic,partition,offset" is that
// group's plan; otherwise every line is "group,topic,partition,offset".
// Empty lines are skipped. Errors name the file and line.
func readResetPlan(path string, singleGroup bool, groups []string) (map[string][]kadm.Offset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines [][]string
	r := csv.NewReader(strings.NewReader(string(data)))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--from-file %s: %v", path, err)
		}
		lines = append(lines, rec)
	}
	noGroup := singleGroup && len(lines) > 0 && len(lines[0]) == 3
	plan := map[string][]kadm.Offset{}
	for i, rec := range lines {
		want := 4
		if noGroup {
			want = 3
		}
		if len(rec) != want {
			return nil, fmt.Errorf("--from-file %s line %d: want %d fields (%s), got %d", path, i+1, want, map[bool]string{true: "topic,partition,offset", false: "group,topic,partition,offset"}[noGroup], len(rec))
		}
		group := ""
		if noGroup {
			group = groups[0]
		} else {
			group, rec = rec[0], rec[1:]
		}
		p, err1 := strconv.ParseInt(strings.TrimSpace(rec[1]), 10, 32)
		off, err2 := strconv.ParseInt(strings.TrimSpace(rec[2]), 10, 64)
		if err1 != nil || err2 != nil || p < 0 {
			return nil, fmt.Errorf("--from-file %s line %d: partition and offset must be integers: %q", path, i+1, strings.Join(rec, ","))
		}
		plan[group] = append(plan[group], kadm.Offset{Topic: rec[0], Partition: int32(p), At: off, LeaderEpoch: -1})
	}
	return plan, nil
}
