// Package topicconfig holds what DescribeConfigs v3+ reports about each
// topic config besides its value: Kafka's config_type and a one-line
// documentation. Names, defaults, broker synonyms and validation live in
// the config package (config.TopicConfigKeys, DescribeTopicConfigs,
// ValidateTopicConfigs); this table only adds type and doc.
package topicconfig

import "github.com/twmb/franz-go/pkg/kmsg"

// Key is one topic config's type and documentation.
type Key struct {
	Name string
	Type kmsg.ConfigType // DescribeConfigs v3+ config_type
	Doc  string
}

// Keys lists the topic configs by name, sorted.
var Keys = []Key{
	{Name: "cleanup.policy", Type: kmsg.ConfigTypeList,
		Doc: "\"delete\" discards old segments by retention time or size; \"compact\" keeps the last record per key; both may be listed."},
	{Name: "compression.type", Type: kmsg.ConfigTypeString,
		Doc: "Final compression of the topic's batches: uncompressed, gzip, snappy, lz4, zstd, or producer (keep the producer's codec)."},
	{Name: "delete.retention.ms", Type: kmsg.ConfigTypeLong,
		Doc: "How long tombstones are kept on compacted topics."},
	{Name: "file.delete.delay.ms", Type: kmsg.ConfigTypeLong,
		Doc: "Delay before a deleted segment's files are removed from the file system."},
	{Name: "flush.messages", Type: kmsg.ConfigTypeLong,
		Doc: "Messages appended between forced fsyncs of the log."},
	{Name: "flush.ms", Type: kmsg.ConfigTypeLong,
		Doc: "Maximum time between forced fsyncs of the log."},
	{Name: "index.interval.bytes", Type: kmsg.ConfigTypeInt,
		Doc: "Bytes of batches between two entries of the offset index."},
	{Name: "max.compaction.lag.ms", Type: kmsg.ConfigTypeLong,
		Doc: "Maximum time a record stays uncompacted."},
	{Name: "max.message.bytes", Type: kmsg.ConfigTypeInt,
		Doc: "Largest record batch size allowed."},
	{Name: "message.downconversion.enable", Type: kmsg.ConfigTypeBoolean,
		Doc: "Whether old consumers may get down-converted batches."},
	{Name: "message.timestamp.difference.max.ms", Type: kmsg.ConfigTypeLong,
		Doc: "Largest allowed difference between a CreateTime timestamp and the broker's clock."},
	{Name: "message.timestamp.type", Type: kmsg.ConfigTypeString,
		Doc: "CreateTime keeps the producer's timestamp; LogAppendTime stamps the broker's."},
	{Name: "min.cleanable.dirty.ratio", Type: kmsg.ConfigTypeDouble,
		Doc: "Dirty/total ratio above which the log is compacted."},
	{Name: "min.compaction.lag.ms", Type: kmsg.ConfigTypeLong,
		Doc: "Minimum time a record stays uncompacted."},
	{Name: "min.insync.replicas", Type: kmsg.ConfigTypeInt,
		Doc: "Minimum ISR size for acks=all produce to succeed."},
	{Name: "preallocate", Type: kmsg.ConfigTypeBoolean,
		Doc: "Preallocate segment files on creation."},
	{Name: "retention.bytes", Type: kmsg.ConfigTypeLong,
		Doc: "Maximum partition size before old segments are deleted; -1 is unlimited."},
	{Name: "retention.ms", Type: kmsg.ConfigTypeLong, Doc: "How long segments are kept before deletion; -1 keeps them forever."},
	{Name: "segment.bytes", Type: kmsg.ConfigTypeInt,
		Doc: "Segment file size at which the log rolls."},
	{Name: "segment.index.bytes", Type: kmsg.ConfigTypeInt,
		Doc: "Size of the offset index preallocated per segment."},
	{Name: "segment.jitter.ms", Type: kmsg.ConfigTypeLong, Doc: "Random jitter subtracted from segment.ms."},
	{Name: "segment.ms", Type: kmsg.ConfigTypeLong, Doc: "Age of a segment's first batch at which the log rolls."},
	{Name: "unclean.leader.election.enable", Type: kmsg.ConfigTypeBoolean,
		Doc: "Whether an out-of-sync replica may become leader (possible data loss)."},
}

var byName = func() map[string]*Key {
	m := make(map[string]*Key, len(Keys))
	for i := range Keys {
		m[Keys[i].Name] = &Keys[i]
	}
	return m
}()

// Lookup returns the key named name, or nil when this table lacks it
// (then its type is UNKNOWN and it has no documentation).
func Lookup(name string) *Key { return byName[name] }

func init() {
	// Kafka's extra configs the config package knows.
	for _, k := range []Key{
		{Name: "follower.replication.throttled.replicas", Type: kmsg.ConfigTypeList, Doc: "Replicas whose follower fetches are throttled (\"partition:broker,…\" or \"*\")."},
		{Name: "leader.replication.throttled.replicas", Type: kmsg.ConfigTypeList, Doc: "Replicas whose leader-side replication is throttled (\"partition:broker,…\" or \"*\")."},
		{Name: "message.format.version", Type: kmsg.ConfigTypeString, Doc: "Record batch format version (ignored: always magic 2 on disk)."},
	} {
		k := k
		byName[k.Name] = &k
	}
}
