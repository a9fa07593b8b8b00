package topics

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/cmd/internal/clientutil"
)

// ParseReplicaAssignment parses --replica-assignment as Kafka's
// TopicCommand.parseReplicaAssignment: partitions separated by ',' (a
// trailing empty one dropped, as Java's String.split drops it), each a
// ':'-separated list of broker ids, the list's index its partition id.
// Errors, with Kafka's messages: an id that is not an int
// ("For input string: \"x\""), a partition listing a broker twice
// ("Partition replica lists may not contain duplicate entries: 1"), a
// partition whose replica count differs from partition 0's
// ("Partition 1 has different replication factor: [1, 2]").
func ParseReplicaAssignment(s string) ([][]int32, error) {
	parts := strings.Split(s, ",")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	out := make([][]int32, 0, len(parts))
	for i, p := range parts {
		fields := strings.Split(p, ":")
		for len(fields) > 1 && fields[len(fields)-1] == "" {
			fields = fields[:len(fields)-1]
		}
		ids := make([]int32, 0, len(fields))
		seen := map[int32]int{}
		dupSet := map[int32]bool{}
		for _, f := range fields {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("For input string: \"%s\"", strings.TrimSpace(f))
			}
			id := int32(n)
			if seen[id]++; seen[id] == 2 {
				dupSet[id] = true
			}
			ids = append(ids, id)
		}
		if len(dupSet) > 0 { // Kafka prints a HashSet of small ints: ascending
			dups := sortedIDs(dupSet)
			s := make([]string, len(dups))
			for i, d := range dups {
				s[i] = strconv.Itoa(int(d))
			}
			return nil, fmt.Errorf("Partition replica lists may not contain duplicate entries: %s", strings.Join(s, ","))
		}
		if i > 0 && len(ids) != len(out[0]) {
			return nil, fmt.Errorf("Partition %d has different replication factor: %s", i, javaList(ids))
		}
		out = append(out, ids)
	}
	return out, nil
}

// javaList renders ids as Java's List.toString: "[1, 2]".
func javaList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// assignmentFor returns the manual assignment of the partitions a topic
// with cur partitions gains when grown to total: as Kafka's alterTopic,
// the --replica-assignment entries from index cur on (the first cur
// describe the existing partitions and are not used). Their count must be
// total-cur; the broker answers the same mismatch with
// INVALID_REPLICA_ASSIGNMENT, and this keeps the ZooKeeper form from
// writing a partition count other than --partitions.
func assignmentFor(assignment [][]int32, cur, total int) ([][]int32, error) {
	if assignment == nil {
		return nil, nil
	}
	var added [][]int32
	if cur < len(assignment) {
		added = assignment[cur:]
	}
	if total > cur && len(added) != total-cur {
		return nil, kafkaErr(kerr.InvalidReplicaAssignment, "Increasing the number of partitions by %d but %d assignments provided.", total-cur, len(added))
	}
	return added, nil
}

// checkAssignmentOptions is TopicCommandOptions.checkInvalidArgs for
// --replica-assignment: only with --create or --alter, and on create not
// with --partitions or --replication-factor (the assignment gives both).
func (o *Options) checkAssignmentOptions() error {
	if o.ReplicaAssignment == "" {
		return nil
	}
	for _, a := range []struct {
		on   bool
		name string
	}{{o.Describe, "describe"}, {o.List, "list"}, {o.Delete, "delete"}} {
		if a.on {
			return clientutil.Usage("Option \"[replica-assignment]\" can't be used with option \"[%s]\"", a.name)
		}
	}
	if o.Create {
		if o.Partitions != -1 {
			return clientutil.Usage("Option \"[replica-assignment]\" can't be used with option \"[partitions]\"")
		}
		if o.ReplicationFactor != -1 {
			return clientutil.Usage("Option \"[replica-assignment]\" can't be used with option \"[replication-factor]\"")
		}
	}
	return nil
}

// brokerList renders a replica list as Scala's mkString(", ").
func brokerList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ", ")
}

// sortedIDs returns the set's ids, sorted.
func sortedIDs(set map[int32]bool) []int32 {
	out := make([]int32, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
