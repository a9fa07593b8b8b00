// Package topics is `gregor topics` (kafka-topics.sh): create, list,
// describe, alter (add partitions) and delete topics, with Kafka's
// TopicCommand flags and output. The work goes through the Admin interface;
// KadmAdmin implements it over the Kafka protocol (franz-go kadm). A
// ZooKeeper implementation (--zookeeper) plugs in through ZooKeeperAdmin.
package topics

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
)

// Admin is what the topic command needs from a cluster. Errors from the
// cluster should keep their kerr error (errors.Is(err, kerr.TopicAlreadyExists)).
type Admin interface {
	// ListTopics returns every topic name (internal ones included), sorted.
	ListTopics(ctx context.Context) ([]string, error)
	// CreateTopic creates one topic; partitions / replicationFactor -1 take
	// the broker's num.partitions / default.replication.factor. A non-nil
	// assignment (--replica-assignment: index = partition id, value =
	// broker ids) places the replicas instead; partitions and
	// replicationFactor are then -1.
	CreateTopic(ctx context.Context, topic string, partitions int32, replicationFactor int16, assignment [][]int32, configs map[string]string) error
	// DeleteTopics deletes the topics.
	DeleteTopics(ctx context.Context, topics []string) error
	// SetPartitionCount grows a topic to total partitions (CreatePartitions).
	// A non-nil added holds the replicas of the new partitions, in order
	// (CreatePartitions' Assignment); nil lets the cluster place them.
	SetPartitionCount(ctx context.Context, topic string, total int, added [][]int32) error
	// DescribeTopics returns the topics' partitions and non-default configs,
	// in the order asked.
	DescribeTopics(ctx context.Context, topics []string) ([]TopicDescription, error)
	// Close releases the connection(s).
	Close()
}

// TopicDescription is one topic as --describe prints it.
type TopicDescription struct {
	Name       string
	ID         string // Kafka's Uuid text (URL-safe base64, no padding); "" when the cluster has no topic ids
	Partitions []PartitionDescription
	// Configs are the topic's configs whose source is not DEFAULT_CONFIG
	// (topic overrides and static broker settings), sorted by name, as
	// Kafka's TopicCommand prints them.
	Configs []ConfigValue
	// FromZooKeeper: read from ZooKeeper's partition state znodes, whose
	// leader -1 Kafka 2.x's `--zookeeper --describe` prints as "-1"
	// (a partition without a state znode, ISR nil, still prints "none").
	FromZooKeeper bool
	// MinInSyncReplicas is the topic's min.insync.replicas in effect
	// (override or broker default) for --under-min-isr-partitions and
	// --at-min-isr-partitions; 0 = unknown (the ZooKeeper form, as in
	// Kafka's, does not read it).
	MinInSyncReplicas int
}

// PartitionDescription is one partition's leadership.
type PartitionDescription struct {
	Partition int32
	Leader    int32 // -1 = no leader (printed "none")
	Replicas  []int32
	ISR       []int32
	// Reassignment is the partition's reassignment under way
	// (ListPartitionReassignments, KIP-455); nil when none (or in the
	// ZooKeeper form, which Kafka 2.x does not print).
	Reassignment *Reassignment
}

// Reassignment is a partition's reassignment as ListPartitionReassignments
// reports it: the replicas being added and removed (broker ids).
type Reassignment struct {
	Adding, Removing []int32
}

// ConfigValue is one name=value pair.
type ConfigValue struct{ Name, Value string }

// ZooKeeperAdmin, when set, returns an Admin that works through ZooKeeper
// for --zookeeper host:port[/chroot]. Nil (today): --zookeeper is refused
// with exit status 2.
var ZooKeeperAdmin func(connect string) (Admin, error)

// KadmAdmin is Admin over the Kafka protocol: Adm for what kadm shapes,
// Cl (the client under Adm) for the requests with a manual replica
// assignment, which kadm does not send.
type KadmAdmin struct {
	Adm *kadm.Client
	Cl  *kgo.Client
}

// ListTopics implements Admin.
func (a KadmAdmin) ListTopics(ctx context.Context) ([]string, error) {
	ds, err := a.Adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return nil, err
	}
	if err := ds.Error(); err != nil {
		return nil, err
	}
	return ds.Names(), nil
}

// CreateTopic implements Admin.
func (a KadmAdmin) CreateTopic(ctx context.Context, topic string, partitions int32, rf int16, assignment [][]int32, configs map[string]string) error {
	if assignment != nil {
		return a.createWithAssignment(ctx, topic, assignment, configs)
	}
	cfg := make(map[string]*string, len(configs))
	for k, v := range configs {
		v := v
		cfg[k] = &v
	}
	// kadm returns resp.Err as err too: look at the response first so the
	// broker's ErrorMessage is not lost.
	resp, err := a.Adm.CreateTopic(ctx, partitions, rf, cfg, topic)
	if resp.Err != nil {
		return clientutil.WithMessage(resp.Err, resp.ErrMessage)
	}
	return err
}

// DeleteTopics implements Admin.
func (a KadmAdmin) DeleteTopics(ctx context.Context, topics []string) error {
	resps, err := a.Adm.DeleteTopics(ctx, topics...)
	if err != nil {
		return err
	}
	for _, t := range resps.Sorted() {
		if t.Err != nil && t.ErrMessage != "" {
			return clientutil.WithMessage(t.Err, t.ErrMessage)
		}
		if t.Err != nil {
			return fmt.Errorf("topic %s: %w", t.Topic, t.Err)
		}
	}
	return nil
}

// SetPartitionCount implements Admin.
func (a KadmAdmin) SetPartitionCount(ctx context.Context, topic string, total int, added [][]int32) error {
	if added != nil {
		return a.addPartitionsWithAssignment(ctx, topic, total, added)
	}
	resps, err := a.Adm.UpdatePartitions(ctx, total, topic)
	if err != nil {
		return err
	}
	for _, r := range resps.Sorted() {
		if r.Err != nil {
			return clientutil.WithMessage(r.Err, r.ErrMessage)
		}
	}
	return nil
}

// DescribeTopics implements Admin. When the cluster cannot describe configs
// (an old or partial broker), Configs is left empty rather than failing
// the whole describe.
func (a KadmAdmin) DescribeTopics(ctx context.Context, topics []string) ([]TopicDescription, error) {
	ds, err := a.Adm.ListTopicsWithInternal(ctx, topics...)
	if err != nil {
		return nil, err
	}
	configs := map[string][]ConfigValue{}
	minISR := map[string]int{}
	if rcs, err := a.Adm.DescribeTopicConfigs(ctx, topics...); err == nil {
		for _, rc := range rcs {
			if rc.Err != nil {
				continue
			}
			for _, c := range rc.Configs {
				if c.Key == "min.insync.replicas" && c.Value != nil {
					if n, err := strconv.Atoi(*c.Value); err == nil && n > 0 {
						minISR[rc.Name] = n
					}
				}
				if c.Source == kmsg.ConfigSourceDefaultConfig || c.Value == nil {
					continue
				}
				configs[rc.Name] = append(configs[rc.Name], ConfigValue{c.Key, *c.Value})
			}
			sort.Slice(configs[rc.Name], func(i, j int) bool { return configs[rc.Name][i].Name < configs[rc.Name][j].Name })
		}
	}
	// Kafka's listAllReassignments: a cluster that cannot list them
	// (UNSUPPORTED_VERSION, CLUSTER_AUTHORIZATION_FAILED) has none to print.
	ras, err := a.Adm.ListPartitionReassignments(ctx, topicsSet(ds))
	if err != nil && !errors.Is(err, kerr.UnsupportedVersion) && !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		return nil, err
	}
	out := make([]TopicDescription, 0, len(topics))
	for _, t := range topics {
		d, ok := ds[t]
		if !ok {
			return nil, fmt.Errorf("topic %s: %w", t, kerr.UnknownTopicOrPartition)
		}
		if d.Err != nil {
			return nil, fmt.Errorf("topic %s: %w", t, d.Err)
		}
		td := TopicDescription{Name: t, Configs: configs[t], MinInSyncReplicas: minISR[t]}
		if d.ID != (kadm.TopicID{}) {
			td.ID = base64.RawURLEncoding.EncodeToString(d.ID[:])
		}
		for _, p := range d.Partitions.Sorted() {
			pd := PartitionDescription{Partition: p.Partition, Leader: p.Leader, Replicas: p.Replicas, ISR: p.ISR}
			if r, ok := ras[t][p.Partition]; ok {
				pd.Reassignment = &Reassignment{Adding: r.AddingReplicas, Removing: r.RemovingReplicas}
			}
			td.Partitions = append(td.Partitions, pd)
		}
		out = append(out, td)
	}
	return out, nil
}

// topicsSet is every partition of ds, for ListPartitionReassignments.
func topicsSet(ds kadm.TopicDetails) kadm.TopicsSet {
	set := kadm.TopicsSet{}
	for t, d := range ds {
		for p := range d.Partitions {
			set.Add(t, p)
		}
	}
	return set
}

// createWithAssignment is CreateTopics v4 with ReplicaAssignment and
// NumPartitions / ReplicationFactor -1, as the Java AdminClient sends a
// NewTopic built from an assignment (kadm has no form for it). The
// controller validates the assignment (INVALID_REPLICA_ASSIGNMENT with
// its message: unknown brokers, duplicates, inconsistent replica counts).
func (a KadmAdmin) createWithAssignment(ctx context.Context, topic string, assignment [][]int32, configs map[string]string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, -1, -1
	for p, replicas := range assignment {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = int32(p), replicas
		t.ReplicaAssignment = append(t.ReplicaAssignment, ra)
	}
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		t.Configs = append(t.Configs, c)
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, a.Cl)
	if err != nil {
		return err
	}
	return topicAnswer("CreateTopics", topic, len(resp.Topics), func(i int) (int16, *string) {
		return resp.Topics[i].ErrorCode, resp.Topics[i].ErrorMessage
	})
}

// addPartitionsWithAssignment is CreatePartitions with Assignment: the
// replicas of each new partition, in order (kadm has no form for it).
func (a KadmAdmin) addPartitionsWithAssignment(ctx context.Context, topic string, total int, added [][]int32) error {
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = 30000
	t := kmsg.NewCreatePartitionsRequestTopic()
	t.Topic, t.Count = topic, int32(total)
	for _, replicas := range added {
		as := kmsg.NewCreatePartitionsRequestTopicAssignment()
		as.Replicas = replicas
		t.Assignment = append(t.Assignment, as)
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, a.Cl)
	if err != nil {
		return err
	}
	return topicAnswer("CreatePartitions", topic, len(resp.Topics), func(i int) (int16, *string) {
		return resp.Topics[i].ErrorCode, resp.Topics[i].ErrorMessage
	})
}

// topicAnswer is the outcome of a one-topic admin request's answer of n
// topics, at(i) giving each one's error code and message: the first error
// (with the broker's message), or an error when the topic is missing.
func topicAnswer(api, topic string, n int, at func(i int) (int16, *string)) error {
	for i := 0; i < n; i++ {
		code, msg := at(i)
		if err := kerr.ErrorForCode(code); err != nil {
			return clientutil.WithMessage(err, derefString(msg))
		}
	}
	if n == 0 {
		return fmt.Errorf("topic %s: the broker answered %s without the topic", topic, api)
	}
	return nil
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// LiveBrokers implements LiveBrokerLister: the brokers in the cluster's
// metadata (a Metadata request for no topics).
func (a KadmAdmin) LiveBrokers(ctx context.Context) ([]int32, error) {
	m, err := a.Adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, err
	}
	return m.Brokers.NodeIDs(), nil
}

// Close implements Admin.
func (a KadmAdmin) Close() { a.Adm.Close() }
