package consumergroups

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

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

// printPlan is Kafka's printOffsetsToReset: GROUP TOPIC PARTITION
// NEW-OFFSET, one row per planned offset.
func printPlan(out io.Writer, plan []plannedOffset) error {
	tw := tabwriter.NewWriter(out, 0, 0, 1, ' ', 0)
	fmt.Fprintln(out)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tNEW-OFFSET")
	for _, x := range plan {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", x.group, x.Topic, x.Partition, x.At)
	}
	return tw.Flush()
}

// resetOffsets plans (and with --execute commits) new offsets for group
// and returns the plan. Like Kafka, only an inactive group (Empty or
// unknown) may be reset: for another one it prints Kafka's error line on
// out and returns no plan and no error (Kafka goes on and exits 0).
func resetOffsets(ctx context.Context, o Options, adm *kadm.Client, group string, out io.Writer) ([]plannedOffset, error) {
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
	if o.AllTopics {
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
