package reassign

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gregor/partition"
	"gregor/replication/controller"
)

// FormatJSON renders an assignment as Kafka's tool prints it
// (formatAsReassignmentJson): version 1, partitions sorted, every replica's
// log dir "any".
func FormatJSON(a map[partition.TopicPartition][]int32) string {
	doc := controller.Reassignment{Version: 1, Partitions: []controller.PartitionReplicas{}}
	for _, tp := range sortedTPs(a) {
		dirs := make([]string, len(a[tp]))
		for i := range dirs {
			dirs[i] = "any"
		}
		doc.Partitions = append(doc.Partitions, controller.PartitionReplicas{Topic: tp.Topic, Partition: tp.Partition, Replicas: a[tp], LogDirs: dirs})
	}
	return string(doc.Encode())
}

// ParseTopicsToMove reads a --topics-to-move-json-file
// ({"topics":[{"topic":"foo"}],"version":1}) and refuses duplicates.
func ParseTopicsToMove(data []byte) ([]string, error) {
	var doc struct {
		Topics []struct {
			Topic *string `json:"topic"`
		} `json:"topics"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("invalid topics-to-move JSON: %w", err)
	}
	var out, dups []string
	seen := map[string]bool{}
	for i, t := range doc.Topics {
		if t.Topic == nil {
			return nil, fmt.Errorf("invalid topics-to-move JSON: entry %d has no \"topic\"", i)
		}
		if seen[*t.Topic] {
			dups = append(dups, *t.Topic)
		}
		seen[*t.Topic] = true
		out = append(out, *t.Topic)
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("List of topics to reassign contains duplicate entries: %s", strings.Join(dups, ","))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("List of topics to reassign is empty")
	}
	return out, nil
}

// ParseExecute reads a --reassignment-json-file for --execute with
// Kafka's checks (parseExecuteAssignmentArgs); withDirs reports log_dirs
// other than "any" (replica moves between log directories).
func ParseExecute(data []byte) (map[partition.TopicPartition][]int32, bool, error) {
	doc, err := controller.DecodeReassignment(data)
	if err != nil {
		return nil, false, err
	}
	if len(doc.Partitions) == 0 {
		return nil, false, fmt.Errorf("Partition reassignment list cannot be empty")
	}
	out := map[partition.TopicPartition][]int32{}
	var dupParts, dupReplicas []string
	withDirs := false
	for _, e := range doc.Partitions {
		if len(e.Replicas) == 0 {
			return nil, false, fmt.Errorf("Partition replica list cannot be empty")
		}
		if _, ok := out[e.TP()]; ok {
			dupParts = append(dupParts, e.TP().String())
		}
		out[e.TP()] = e.Replicas
		if d := duplicates(e.Replicas); len(d) > 0 {
			dupReplicas = append(dupReplicas, fmt.Sprintf("%s contains multiple entries for %s", e.TP(), joinIDs(d)))
		}
		withDirs = withDirs || hasDirs(e.LogDirs)
	}
	if len(dupParts) > 0 {
		return nil, false, fmt.Errorf("Partition reassignment contains duplicate topic partitions: %s", strings.Join(dupParts, ","))
	}
	if len(dupReplicas) > 0 {
		return nil, false, fmt.Errorf("Partition replica lists may not contain duplicate entries: %s", strings.Join(dupReplicas, ". "))
	}
	return out, withDirs, nil
}

func duplicates(ids []int32) []int32 {
	seen := map[int32]int{}
	var out []int32
	for _, id := range ids {
		seen[id]++
		if seen[id] == 2 {
			out = append(out, id)
		}
	}
	return out
}

func sortedTPs[V any](m map[partition.TopicPartition]V) []partition.TopicPartition {
	out := make([]partition.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	controller.SortTPs(out)
	return out
}

func joinTPs(tps []partition.TopicPartition, sep string) string {
	s := make([]string, len(tps))
	for i, tp := range tps {
		s[i] = tp.String()
	}
	return strings.Join(s, sep)
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

func sortIDs(ids []int32) []int32 {
	out := slices.Clone(ids)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func equal(a, b []int32) bool { return slices.Equal(a, b) }
