package controller

import (
	"encoding/json"
	"fmt"
	"sort"

	"gregor/partition"
)

// This file holds the JSON documents of partition reassignment and
// preferred replica election, shared by the controller (the znodes
// /admin/reassign_partitions and /admin/preferred_replica_election) and the
// tools (kafka-reassign-partitions.sh and
// kafka-preferred-replica-election.sh files, which use the same shapes).

// PartitionReplicas is one partition of a reassignment document: its topic,
// partition id and target replicas (preferred leader first). LogDirs is
// the optional per-replica log directory of the tools' files ("any" = no
// preference); the controller ignores it.
type PartitionReplicas struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Replicas  []int32  `json:"replicas"`
	LogDirs   []string `json:"log_dirs,omitempty"`
}

// TP is the entry's topic-partition.
func (p PartitionReplicas) TP() partition.TopicPartition {
	return partition.TopicPartition{Topic: p.Topic, Partition: p.Partition}
}

// Reassignment is the document of /admin/reassign_partitions
// (ReassignPartitionsZNode, version 1) and of the tools'
// --reassignment-json-file: {"version":1,"partitions":[{"topic":"t",
// "partition":0,"replicas":[1,2]}]}.
type Reassignment struct {
	Version    int                 `json:"version"`
	Partitions []PartitionReplicas `json:"partitions"`
}

// DecodeReassignment parses a reassignment document. It keeps duplicate
// entries (the tools report them) and checks only the JSON shape: every
// entry needs a topic and a replicas array, and log_dirs, when present,
// one entry per replica.
func DecodeReassignment(data []byte) (Reassignment, error) {
	var raw struct {
		Version    int `json:"version"`
		Partitions []struct {
			Topic     *string   `json:"topic"`
			Partition *int32    `json:"partition"`
			Replicas  *[]int32  `json:"replicas"`
			LogDirs   *[]string `json:"log_dirs"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Reassignment{}, fmt.Errorf("invalid reassignment JSON: %w", err)
	}
	r := Reassignment{Version: raw.Version}
	if r.Version == 0 {
		r.Version = 1
	}
	for i, p := range raw.Partitions {
		if p.Topic == nil || p.Partition == nil || p.Replicas == nil {
			return Reassignment{}, fmt.Errorf("invalid reassignment JSON: partition entry %d needs \"topic\", \"partition\" and \"replicas\"", i)
		}
		e := PartitionReplicas{Topic: *p.Topic, Partition: *p.Partition, Replicas: *p.Replicas}
		if p.LogDirs != nil {
			e.LogDirs = *p.LogDirs
			if len(e.LogDirs) != len(e.Replicas) {
				return Reassignment{}, fmt.Errorf("Size of replicas list %v is different from size of log dirs list %v for partition %s-%d", e.Replicas, e.LogDirs, e.Topic, e.Partition)
			}
		}
		r.Partitions = append(r.Partitions, e)
	}
	return r, nil
}

// Encode renders the document compactly, as Kafka writes it. Entries are
// sorted by topic and partition (Kafka's tools sort them too).
func (r Reassignment) Encode() []byte {
	out := Reassignment{Version: r.Version, Partitions: append([]PartitionReplicas{}, r.Partitions...)}
	if out.Version == 0 {
		out.Version = 1
	}
	sort.SliceStable(out.Partitions, func(i, j int) bool { return lessTP(out.Partitions[i].TP(), out.Partitions[j].TP()) })
	for i := range out.Partitions {
		if out.Partitions[i].Replicas == nil {
			out.Partitions[i].Replicas = []int32{}
		}
	}
	raw, _ := json.Marshal(out)
	return raw
}

// ElectionDocument is the document of /admin/preferred_replica_election
// (PreferredReplicaElectionZNode, version 1) and of the election tools'
// --path-to-json-file: {"version":1,"partitions":[{"topic":"t","partition":0}]}.
type ElectionDocument struct {
	Version    int                        `json:"version"`
	Partitions []partition.TopicPartition `json:"-"`
}

type electionEntry struct {
	Topic     *string `json:"topic"`
	Partition *int32  `json:"partition"`
}

// DecodeElection parses an election document, keeping duplicates (the
// tools report them).
func DecodeElection(data []byte) (ElectionDocument, error) {
	var raw struct {
		Version    int             `json:"version"`
		Partitions []electionEntry `json:"partitions"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return ElectionDocument{}, fmt.Errorf("invalid election JSON: %w", err)
	}
	d := ElectionDocument{Version: raw.Version}
	for i, p := range raw.Partitions {
		if p.Topic == nil || p.Partition == nil {
			return ElectionDocument{}, fmt.Errorf("invalid election JSON: partition entry %d needs \"topic\" and \"partition\"", i)
		}
		d.Partitions = append(d.Partitions, partition.TopicPartition{Topic: *p.Topic, Partition: *p.Partition})
	}
	return d, nil
}

// Encode renders the document ({"version":1,"partitions":[…]}), entries in
// the order given.
func (d ElectionDocument) Encode() []byte {
	type entry struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
	}
	out := struct {
		Version    int     `json:"version"`
		Partitions []entry `json:"partitions"`
	}{Version: 1, Partitions: []entry{}}
	for _, tp := range d.Partitions {
		out.Partitions = append(out.Partitions, entry{tp.Topic, tp.Partition})
	}
	raw, _ := json.Marshal(out)
	return raw
}

// lessTP orders topic-partitions by topic, then partition.
func lessTP(a, b partition.TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

// SortTPs sorts topic-partitions by topic, then partition.
func SortTPs(tps []partition.TopicPartition) {
	sort.Slice(tps, func(i, j int) bool { return lessTP(tps[i], tps[j]) })
}
