package consumergroups

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/cmd/internal/clientutil"
)

// deleteOffsets is --delete-offsets (OffsetDelete, API 47, KIP-496): the
// group's committed offsets of the --topic partitions ("t" = every
// partition of t, "t:0,1" = those) are deleted. As Kafka's
// ConsumerGroupCommand.deleteOffsets it prints a summary line (or, for a
// failure, printError's "Error: …" line) and then the table
// "TOPIC PARTITION STATUS" with "Successful" or "Error: <exception>" per
// partition ("Not Provided" for a topic whose partitions could not be
// listed); like Kafka it exits 0 either way. The rows are formatted with
// Kafka 2.8–3.6's "%-30s %-15s %-15s" and a line each (3.9's Java port
// lost the line breaks).
func deleteOffsets(ctx context.Context, adm *kadm.Client, group string, topics []string, out io.Writer) error {
	results := map[tp]error{} // nil = deleted
	set := kadm.TopicsSet{}
	var whole []string
	for _, t := range topics {
		if !strings.Contains(t, ":") {
			whole = append(whole, t)
			continue
		}
		spec, err := parseTopicSpec(t)
		if err != nil {
			return err
		}
		for _, p := range spec.partitions {
			set.Add(spec.topic, p)
		}
	}
	if len(whole) > 0 {
		ds, err := adm.ListTopics(ctx, whole...)
		if err != nil {
			return err
		}
		for _, t := range whole {
			d, ok := ds[t]
			switch {
			case !ok:
				results[tp{t, -1}] = kerr.UnknownTopicOrPartition
			case d.Err != nil:
				results[tp{t, -1}] = d.Err
			default:
				for p := range d.Partitions {
					set.Add(t, p)
				}
			}
		}
	}
	top, err := offsetDelete(ctx, adm, group, set, results)
	if err != nil {
		return err
	}
	switch {
	case top == nil:
		fmt.Fprintf(out, "Request succeed for deleting offsets with topic %s group %s\n", strings.Join(topics, ", "), group)
	case errors.Is(top, kerr.InvalidGroupID):
		printError(out, "'%s' is not valid.", group)
	case errors.Is(top, kerr.GroupIDNotFound):
		printError(out, "'%s' does not exist.", group)
	case errors.Is(top, kerr.GroupAuthorizationFailed):
		printError(out, "Access to '%s' is not authorized.", group)
	case errors.Is(top, kerr.NonEmptyGroup):
		printError(out, "Deleting offsets of a consumer group '%s' is forbidden if the group is not empty.", group)
	case errors.Is(top, kerr.GroupSubscribedToTopic), errors.Is(top, kerr.TopicAuthorizationFailed), errors.Is(top, kerr.UnknownTopicOrPartition):
		printError(out, "Encounter some partition level error, see the follow-up details:")
	default:
		printError(out, "Encounter some unknown error: %s", errorName(top))
	}
	// Kafka sorts the rows by topic and partition concatenated as text.
	rows := make([]tp, 0, len(results))
	for k := range results {
		rows = append(rows, k)
	}
	key := func(k tp) string { return k.topic + strconv.Itoa(int(k.partition)) }
	sort.Slice(rows, func(i, j int) bool { return key(rows[i]) < key(rows[j]) })
	fmt.Fprintf(out, "\n%-30s %-15s %-15s\n", "TOPIC", "PARTITION", "STATUS")
	for _, k := range rows {
		part := "Not Provided"
		if k.partition >= 0 {
			part = strconv.Itoa(int(k.partition))
		}
		status := "Successful"
		if e := results[k]; e != nil {
			status = "Error: " + clientutil.JavaException(e)
		}
		fmt.Fprintf(out, "%-30s %-15s %-15s\n", k.topic, part, status)
	}
	return nil
}

// offsetDelete sends OffsetDelete for set and fills results per
// partition; it returns the error Kafka's admin client fails the whole
// request with (the group-level error, else the first partition error),
// nil when every partition was deleted. A group-level error fails every
// partition, as the admin client does. With nothing to delete (every
// --topic unknown) the group's existence is still checked, as the request
// Kafka sends anyway would.
func offsetDelete(ctx context.Context, adm *kadm.Client, group string, set kadm.TopicsSet, results map[tp]error) (error, error) {
	var top error
	if len(set) == 0 {
		ds, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return nil, err
		}
		if d, ok := ds[group]; ok && d.Err != nil {
			top = d.Err
		} else if !ok || d.State == "Dead" {
			top = kerr.GroupIDNotFound
		}
	} else {
		rs, err := adm.DeleteOffsets(ctx, group, set)
		var ke *kerr.Error
		if err != nil && !errors.As(err, &ke) {
			return nil, err
		}
		if err != nil {
			top = ke
		}
		for t, ps := range set {
			for p := range ps {
				var perr error
				switch {
				case top != nil:
					perr = top
				default:
					e, ok := rs[t][p]
					if !ok {
						e = fmt.Errorf("the broker did not answer for partition %s-%d", t, p)
					}
					perr = e
				}
				results[tp{t, p}] = perr
			}
		}
	}
	if top != nil {
		return top, nil
	}
	// No group-level error: a failed partition of the request (the first
	// in order) is the admin client's all() failure; a topic that could
	// not be listed is not part of the request.
	keys := make([]tp, 0, len(results))
	for k, e := range results {
		if e != nil && k.partition >= 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].topic != keys[j].topic {
			return keys[i].topic < keys[j].topic
		}
		return keys[i].partition < keys[j].partition
	})
	if len(keys) > 0 {
		return results[keys[0]], nil
	}
	return nil, nil
}

// errorName is Kafka's Errors enum name of err (GROUP_SUBSCRIBED_TO_TOPIC).
func errorName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}
