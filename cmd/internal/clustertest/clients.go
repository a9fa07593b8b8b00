package clustertest

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// Seeds are the listeners of the running brokers that reach the
// metadata store: a broker cut off from it (Disconnect) may still believe
// it leads, and a client that asked it first would wait on it.
func (c *Cluster) Seeds() []string {
	var out []string
	for _, id := range c.Running() {
		if s := c.Session(id); s != nil && !s.Disconnected() {
			out = append(out, c.Addr(id))
		}
	}
	return out
}

// Client is a franz-go client seeded with the running brokers, closed at
// the test's end.
func (c *Cluster) Client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Seeds()...),
		// Leaders move within milliseconds here: retry and refresh
		// metadata at that pace rather than kgo's 100 ms–1 s and 5 s.
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }),
		kgo.MetadataMinAge(10 * time.Millisecond)}, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// Admin is a kadm client over Client().
func (c *Cluster) Admin() *kadm.Client { return kadm.NewClient(c.Client()) }

// CreateTopic creates topic with CreateTopics and waits until every
// partition has a leader with a full ISR that serves it.
func (c *Cluster) CreateTopic(topic string, partitions int32, rf int16) {
	c.t.Helper()
	c.createTopic(topic, partitions, rf, nil)
}

// CreateTopicAssigned is CreateTopic with an explicit replica assignment
// (CreateTopics' assignments; the first replica is the preferred leader),
// partition → replica ids.
func (c *Cluster) CreateTopicAssigned(topic string, assignment map[int32][]int32) {
	c.t.Helper()
	var rf int16
	for _, rs := range assignment {
		rf = int16(len(rs))
	}
	c.createTopic(topic, int32(len(assignment)), rf, assignment)
}

func (c *Cluster) createTopic(topic string, partitions int32, rf int16, assignment map[int32][]int32) {
	c.t.Helper()
	defer c.logf(time.Now(), "created %s", topic)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, rf
	if assignment != nil {
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		for p := int32(0); p < partitions; p++ {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = p, assignment[p]
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, c.Client()) // kgo sends it to the controller
	if err != nil {
		c.t.Fatalf("clustertest: create %s: %v", topic, err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		c.t.Fatalf("clustertest: create %s: %+v", topic, resp.Topics)
	}
	for p := int32(0); p < partitions; p++ {
		c.WaitFor(fmt.Sprintf("%s-%d led with a full ISR", topic, p), 10*time.Second, func() (bool, string) {
			s, ok := c.PartitionState(topic, p)
			return ok && s.Leader > 0 && len(s.ISR) == int(rf), fmt.Sprintf("%+v", s)
		})
		c.WaitServing(topic, p)
	}
	c.WaitMetadata(topic, partitions)
}

// Metadata asks broker id for its Metadata of topics (every topic when
// none are named).
func (c *Cluster) Metadata(id int32, topics ...string) (*kmsg.MetadataResponse, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(id)))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return req.RequestWith(ctx, cl.SeedBrokers()[0])
}

// WaitMetadata waits until every running broker's metadata cache lists
// every running broker, the controller in the tree, and (when topic is
// not "") topic's partitions with the leaders the tree names, so that a
// client starting now finds everything on its first try.
func (c *Cluster) WaitMetadata(topic string, partitions int32) {
	c.t.Helper()
	var topics []string
	if topic != "" {
		topics = []string{topic}
	}
	for _, id := range c.Running() {
		c.WaitFor(fmt.Sprintf("broker %d's metadata up to date", id), 10*time.Second, func() (bool, string) {
			m, err := c.Metadata(id, topics...)
			if err != nil {
				return false, err.Error()
			}
			if len(m.Brokers) != len(c.Running()) || m.ControllerID != c.Controller() {
				return false, fmt.Sprintf("%d brokers, controller %d", len(m.Brokers), m.ControllerID)
			}
			if topic == "" {
				return true, ""
			}
			if len(m.Topics) != 1 || m.Topics[0].ErrorCode != 0 || len(m.Topics[0].Partitions) != int(partitions) {
				return false, fmt.Sprintf("topics %+v", m.Topics)
			}
			for _, p := range m.Topics[0].Partitions {
				if want := c.Leader(topic, p.Partition); p.Leader != want || p.ErrorCode != 0 {
					return false, fmt.Sprintf("partition %d: leader %d (tree: %d), code %d", p.Partition, p.Leader, want, p.ErrorCode)
				}
			}
			return true, ""
		})
	}
}

// WaitServing waits until the leader the tree names for topic-p answers
// ListOffsets for it (it has applied its LeaderAndIsr) and returns it.
func (c *Cluster) WaitServing(topic string, p int32) int32 {
	c.t.Helper()
	var leader int32
	c.WaitFor(fmt.Sprintf("the leader of %s-%d serving", topic, p), 10*time.Second, func() (bool, string) {
		leader = c.Leader(topic, p)
		if leader <= 0 || c.Broker(leader) == nil {
			return false, fmt.Sprintf("leader %d", leader)
		}
		_, code, err := c.EndOffset(leader, topic, p)
		return err == nil && code == 0, fmt.Sprintf("leader %d: code %d, %v", leader, code, err)
	})
	return leader
}

// EndOffset asks broker id for topic-p's latest offset (the high
// watermark a consumer sees), with the partition's error code.
func (c *Cluster) EndOffset(id int32, topic string, p int32) (int64, int16, error) {
	return harness.EndOffset(c.Addr(id), topic, p, 2*time.Second)
}

// Produce sends vals to topic-p with acks=all through a fresh client and
// fails the test on any error.
func (c *Cluster) Produce(topic string, p int32, vals ...string) {
	c.t.Helper()
	defer c.logf(time.Now(), "produced %d records to %s-%d", len(vals), topic, p)
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, len(vals))
	for i, v := range vals {
		recs[i] = &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		c.t.Fatalf("clustertest: produce to %s-%d: %v", topic, p, err)
	}
}
