package handlers

// TopicSource is what the metadata and admin handlers (Metadata,
// CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs,
// DescribeCluster) need from the topic registry. Extend it as handlers need more.
type TopicSource interface {
}
