package handlers

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/controller"
	"gregor/replication/metadata"
	"gregor/wire"
)

// TopicSource is what the metadata and admin handlers (Metadata,
// CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs,
// AlterConfigs, IncrementalAlterConfigs, DescribeCluster) need from the
// topic registry. *controller.Controller implements it. Errors returned
// are *controller.Error (Kafka code + message); controller.Code splits them.
type TopicSource interface {
	// Snapshot is the current cluster metadata (lock-free, immutable).
	Snapshot() *metadata.Snapshot
	// CreateTopics creates (or with validateOnly, only checks) topics.
	CreateTopics(topics []controller.NewTopic, validateOnly bool) []controller.CreatedTopic
	// AutoCreateTopics creates missing topics with broker defaults
	// (auto.create.topics.enable); errors by name.
	AutoCreateTopics(names []string) map[string]error
	// DeleteTopics deletes topics by name; one error (or nil) per name.
	DeleteTopics(names []string) []error
	// CreatePartitions raises partition counts; one error per topic.
	CreatePartitions(incs []controller.PartitionIncrease, validateOnly bool) []error
	// TopicConfig returns a topic's config overrides (any broker).
	TopicConfig(topic string) (map[string]string, error)
	// AlterTopicConfig edits a topic's overrides atomically on any broker
	// (see controller); mutate may run more than once.
	AlterTopicConfig(topic string, mutate func(overrides map[string]string) error, validateOnly bool) error
}

var _ TopicSource = (*controller.Controller)(nil)

// async runs an admin operation (which writes and fsyncs metadata) off the
// connection's reader goroutine and answers when it is done. The goroutine
// ends when fn returns (fn's controller calls are bounded by disk writes
// and ZooKeeper timeouts); b's Close waits for it.
func (b *Broker) async(fn func() kmsg.Response) wire.Reply {
	return b.later(func() wire.Response { return wire.Response{Msg: fn()} })
}
