package reassign

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/cmd/internal/clientutil"
	"gregor/partition"
	"gregor/replication/controller"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/replication/zkstore"
)

// ZooKeeperSessionTimeout is the tool's ZooKeeper session timeout (Kafka's
// tool uses 30000 ms).
var ZooKeeperSessionTimeout = 30 * time.Second

// zkCluster is the --zookeeper backend: the Kafka 2.x znodes.
type zkCluster struct{ s metastore.Store }

func openZk(connect string) (*zkCluster, error) {
	s, err := zkstore.Open(connect, zkstore.Config{SessionTimeout: ZooKeeperSessionTimeout})
	if err != nil {
		if errors.Is(err, zkstore.ErrBadConnect) {
			return nil, clientutil.Usage("--zookeeper: %v", err)
		}
		return nil, err
	}
	return &zkCluster{s: s}, nil
}

func (z *zkCluster) close() { z.s.Close() }

func (z *zkCluster) assignment(_ context.Context, topics []string) (map[partition.TopicPartition][]int32, error) {
	return ZkAssignment(z.s, topics, true)
}

func (z *zkCluster) assignmentLenient(_ context.Context, topics []string) (map[partition.TopicPartition][]int32, error) {
	return ZkAssignment(z.s, topics, false)
}

// ZkAssignment reads the replicas of the topics' partitions from
// /brokers/topics/<t>; strict makes an unknown topic an error.
func ZkAssignment(s metastore.Store, topics []string, strict bool) (map[partition.TopicPartition][]int32, error) {
	out := map[partition.TopicPartition][]int32{}
	for _, t := range topics {
		data, _, err := s.Get(zkmeta.TopicPath(t))
		if errors.Is(err, metastore.ErrNoNode) {
			if strict {
				return nil, fmt.Errorf("Topic %s not found.", t)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		a, err := zkmeta.DecodeTopicAssignment(t, data)
		if err != nil {
			return nil, err
		}
		for p, rs := range a.Partitions {
			out[partition.TopicPartition{Topic: t, Partition: p}] = rs
		}
	}
	return out, nil
}

func (z *zkCluster) brokers(context.Context) ([]int32, error) {
	kids, err := z.s.Children(zkmeta.BrokerIDsPath)
	if err != nil && !errors.Is(err, metastore.ErrNoNode) {
		return nil, err
	}
	var ids []int32
	for _, k := range kids {
		if id, err := strconv.ParseInt(k, 10, 32); err == nil {
			ids = append(ids, int32(id))
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func (z *zkCluster) ongoing(context.Context) (map[partition.TopicPartition][]int32, error) {
	data, _, err := z.s.Get(zkmeta.ReassignPartitionsPath)
	if errors.Is(err, metastore.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	doc, err := controller.DecodeReassignment(data)
	if err != nil {
		return nil, err
	}
	out := map[partition.TopicPartition][]int32{}
	for _, e := range doc.Partitions {
		out[e.TP()] = e.Replicas
	}
	return out, nil
}

// create writes /admin/reassign_partitions; the controller picks it up.
func (z *zkCluster) create(proposed map[partition.TopicPartition][]int32) error {
	doc := controller.Reassignment{Version: 1}
	for _, tp := range sortedTPs(proposed) {
		doc.Partitions = append(doc.Partitions, controller.PartitionReplicas{Topic: tp.Topic, Partition: tp.Partition, Replicas: proposed[tp]})
	}
	err := z.s.Create(zkmeta.ReassignPartitionsPath, doc.Encode(), false)
	if errors.Is(err, metastore.ErrNodeExists) {
		return &terse{"Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment."}
	}
	if errors.Is(err, metastore.ErrNoNode) {
		err = metastore.CreateAll(z.s, zkmeta.ReassignPartitionsPath, doc.Encode(), false)
	}
	return err
}

// The throttleWriter over ZooKeeper, as Kafka 2.x's tool: topic configs
// through controller.ChangeTopicConfig (validated, announced), broker
// configs in /config/brokers/<id> with a "brokers/<id>" notification
// (AdminZkClient.changeBrokerConfig). A clear writes only the configs it
// changes.

func (z *zkCluster) setTopicConfigs(_ context.Context, set map[string]map[string]string) error {
	topics := make([]string, 0, len(set))
	for t := range set {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		if _, err := controller.ChangeTopicConfig(z.s, t, func(o map[string]string) error {
			for k, v := range set[t] {
				o[k] = v
			}
			return nil
		}, false); err != nil {
			return err
		}
	}
	return nil
}

func (z *zkCluster) deleteTopicConfigs(_ context.Context, topics []string, keys []string) error {
	for _, t := range topics {
		cur, err := controller.ReadTopicConfig(z.s, t)
		if err != nil {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				continue // Kafka reads a missing topic's config as empty
			}
			return err
		}
		if !hasAny(cur, keys) {
			continue
		}
		if _, err := controller.ChangeTopicConfig(z.s, t, func(o map[string]string) error {
			for _, k := range keys {
				delete(o, k)
			}
			return nil
		}, false); err != nil {
			return err
		}
	}
	return nil
}

func hasAny(m map[string]string, keys []string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

func (z *zkCluster) setBrokerConfigs(_ context.Context, brokers []int32, kv map[string]string) error {
	for _, b := range brokers {
		if err := z.changeBrokerConfig(b, func(o map[string]string) bool {
			for k, v := range kv {
				o[k] = v
			}
			return true
		}); err != nil {
			return err
		}
	}
	return nil
}

func (z *zkCluster) deleteBrokerConfigs(_ context.Context, brokers []int32, keys []string) error {
	for _, b := range brokers {
		if err := z.changeBrokerConfig(b, func(o map[string]string) bool {
			if !hasAny(o, keys) {
				return false
			}
			for _, k := range keys {
				delete(o, k)
			}
			return true
		}); err != nil {
			return err
		}
	}
	return nil
}

// changeBrokerConfig edits /config/brokers/<id> (read, mutate, write back
// conditionally on the version read, retried when another writer won)
// and announces it; mutate returns false to leave it alone.
func (z *zkCluster) changeBrokerConfig(id int32, mutate func(map[string]string) bool) error {
	path := zkmeta.BrokerConfigPath(strconv.Itoa(int(id)))
	for attempt := 0; ; attempt++ {
		cur := map[string]string{}
		data, version, err := z.s.Get(path)
		switch {
		case errors.Is(err, metastore.ErrNoNode):
			version = -1
		case err != nil:
			return err
		default:
			if cur, err = zkmeta.DecodeConfig(data); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		if !mutate(cur) {
			return nil
		}
		if version < 0 {
			err = metastore.CreateAll(z.s, path, zkmeta.EncodeConfig(cur), false)
		} else {
			_, err = z.s.Set(path, zkmeta.EncodeConfig(cur), version)
		}
		if errors.Is(err, metastore.ErrBadVersion) || errors.Is(err, metastore.ErrNodeExists) {
			if attempt < 10 {
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		break
	}
	note := zkmeta.EncodeConfigChange("brokers/" + strconv.Itoa(int(id)))
	_, err := z.s.CreateSequential(zkmeta.ConfigChangePrefix, note, false)
	if errors.Is(err, metastore.ErrNoNode) {
		if err = metastore.EnsurePath(z.s, zkmeta.ConfigChangesPath); err == nil {
			_, err = z.s.CreateSequential(zkmeta.ConfigChangePrefix, note, false)
		}
	}
	return err
}
