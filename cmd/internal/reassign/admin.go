package reassign

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
	"gregor/partition"
	"gregor/replication/controller"
)

// adminCluster is the --bootstrap-server backend: Metadata for the
// assignment and brokers, AlterPartitionReassignments and
// ListPartitionReassignments on the controller (kgo routes them there).
type adminCluster struct {
	cl  *kgo.Client
	adm *kadm.Client
}

func openAdmin(bootstrap string, props map[string]string) (*adminCluster, error) {
	if _, ok := props["client.id"]; !ok {
		props = clientutil.Merge(props, map[string]string{"client.id": "reassign-partitions-tool"})
	}
	cl, err := clientutil.AdminKgoClient(bootstrap, props)
	if err != nil {
		return nil, err
	}
	return &adminCluster{cl: cl, adm: kadm.NewClient(cl)}, nil
}

func (a *adminCluster) close() { a.adm.Close() }

func (a *adminCluster) assignment(ctx context.Context, topics []string) (map[partition.TopicPartition][]int32, error) {
	return a.describe(ctx, topics, true)
}

func (a *adminCluster) assignmentLenient(ctx context.Context, topics []string) (map[partition.TopicPartition][]int32, error) {
	return a.describe(ctx, topics, false)
}

func (a *adminCluster) describe(ctx context.Context, topics []string, strict bool) (map[partition.TopicPartition][]int32, error) {
	td, err := a.adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, err
	}
	out := map[partition.TopicPartition][]int32{}
	for _, t := range topics {
		d, ok := td[t]
		if !ok || d.Err != nil {
			if strict {
				return nil, fmt.Errorf("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic %s not found.", t)
			}
			continue
		}
		for p, pd := range d.Partitions {
			out[partition.TopicPartition{Topic: t, Partition: p}] = pd.Replicas
		}
	}
	return out, nil
}

func (a *adminCluster) brokers(ctx context.Context) ([]int32, error) {
	m, err := a.adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, err
	}
	var ids []int32
	for _, b := range m.Brokers {
		ids = append(ids, b.NodeID)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func (a *adminCluster) listFull(ctx context.Context) ([]controller.PartitionReassignment, error) {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	var out []controller.PartitionReassignment
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, controller.PartitionReassignment{TopicPartition: partition.TopicPartition{Topic: t.Topic, Partition: p.Partition},
				Replicas: p.Replicas, Adding: p.AddingReplicas, Removing: p.RemovingReplicas})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

func (a *adminCluster) ongoing(ctx context.Context) (map[partition.TopicPartition][]int32, error) {
	rs, err := a.listFull(ctx)
	if err != nil {
		return nil, err
	}
	out := map[partition.TopicPartition][]int32{}
	for _, r := range rs {
		out[r.TopicPartition] = r.Replicas
	}
	return out, nil
}

// alter sends AlterPartitionReassignments (nil replicas = cancel) and
// returns the per-partition failures as "<message>" texts.
func (a *adminCluster) alter(ctx context.Context, reqs map[partition.TopicPartition][]int32) (map[partition.TopicPartition]string, error) {
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis = 30000
	idx := map[string]int{}
	for _, tp := range sortedTPs(reqs) {
		i, ok := idx[tp.Topic]
		if !ok {
			t := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			idx[tp.Topic] = i
		}
		p := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		p.Partition, p.Replicas = tp.Partition, reqs[tp]
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if resp.ErrorMessage != nil {
			return nil, fmt.Errorf("%v: %s", err, *resp.ErrorMessage)
		}
		return nil, err
	}
	out := map[partition.TopicPartition]string{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				msg := err.Error()
				if p.ErrorMessage != nil {
					msg = *p.ErrorMessage
				}
				out[partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = msg
			}
		}
	}
	return out, nil
}

// alterErr is the first failure of an IncrementalAlterConfigs answer, with
// the broker's message.
func alterErr(rs kadm.AlterConfigsResponses, err error) error {
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Err != nil {
			if r.ErrMessage != "" {
				return fmt.Errorf("%v: %s", r.Err, r.ErrMessage)
			}
			return r.Err
		}
	}
	return nil
}

func alterOps(op kadm.IncrementalOp, kv map[string]string, keys []string) []kadm.AlterConfig {
	var ops []kadm.AlterConfig
	for _, k := range keys {
		c := kadm.AlterConfig{Op: op, Name: k}
		if v, ok := kv[k]; ok {
			c.Value = &v
		}
		ops = append(ops, c)
	}
	return ops
}

func sortedKeys(kv map[string]string) []string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// The throttleWriter over IncrementalAlterConfigs (TOPIC resources go to
// any broker, BROKER resources to that broker, as Kafka's admin client).

func (a *adminCluster) setTopicConfigs(ctx context.Context, set map[string]map[string]string) error {
	for _, t := range sortedKeys(func() map[string]string {
		m := map[string]string{}
		for t := range set {
			m[t] = ""
		}
		return m
	}()) {
		kv := set[t]
		if err := alterErr(a.adm.AlterTopicConfigs(ctx, alterOps(kadm.SetConfig, kv, sortedKeys(kv)), t)); err != nil {
			return err
		}
	}
	return nil
}

func (a *adminCluster) setBrokerConfigs(ctx context.Context, brokers []int32, kv map[string]string) error {
	if len(brokers) == 0 {
		return nil // kadm would read an empty list as the cluster default
	}
	return alterErr(a.adm.AlterBrokerConfigs(ctx, alterOps(kadm.SetConfig, kv, sortedKeys(kv)), brokers...))
}

// deleteBrokerConfigs sends the DELETEs to the brokers that hold one of
// keys as a per-broker dynamic config (DescribeConfigs source
// DYNAMIC_BROKER_CONFIG), and to every broker it could not describe.
// Kafka sends them to every broker; deleting an absent key changes
// nothing, so the outcome is the same, and a broker without dynamic
// broker configs is not asked to alter what it does not have.
func (a *adminCluster) deleteBrokerConfigs(ctx context.Context, brokers []int32, keys []string) error {
	var todo []int32
	for _, b := range brokers {
		rcs, err := a.adm.DescribeBrokerConfigs(ctx, b)
		if err != nil || len(rcs) != 1 || rcs[0].Err != nil || hasDynamic(rcs[0].Configs, keys) {
			todo = append(todo, b)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	return alterErr(a.adm.AlterBrokerConfigs(ctx, alterOps(kadm.DeleteConfig, nil, keys), todo...))
}

func hasDynamic(cs []kadm.Config, keys []string) bool {
	for _, c := range cs {
		if c.Source == kmsg.ConfigSourceDynamicBrokerConfig && slices.Contains(keys, c.Key) {
			return true
		}
	}
	return false
}

func (a *adminCluster) deleteTopicConfigs(ctx context.Context, topics []string, keys []string) error {
	if len(topics) == 0 {
		return nil
	}
	return alterErr(a.adm.AlterTopicConfigs(ctx, alterOps(kadm.DeleteConfig, nil, keys), topics...))
}
