// Package topicconfig is the table of Kafka topic configs Gregor knows
// (name, type, default, broker-wide synonyms, documentation, validation) and
// the resolution of a topic's effective values: topic override
// (/config/topics/<t>) over server.properties synonym over Kafka default.
// The controller validates CreateTopics/AlterConfigs configs with it and
// DescribeConfigs reports from it.
//
// It is a stand-in until the config package grows the same table
// (config.TopicLogConfig); the names and defaults are Kafka's (LogConfig,
// TopicConfig docs).
package topicconfig

import "github.com/twmb/franz-go/pkg/kmsg"

// Synonym is a broker-wide key that supplies a topic config's default,
// with the factor that converts its unit to the topic config's unit
// (log.retention.hours → retention.ms: 3600000).
type Synonym struct {
	Key    string
	Factor int64 // 1 for same unit
}

// Key describes one topic config.
type Key struct {
	Name     string
	Type     kmsg.ConfigType // DescribeConfigs v3+ config_type
	Default  string          // Kafka's default when no synonym is set
	Synonyms []Synonym       // broker keys in precedence order (most specific first)
	Doc      string
	validate func(v string) error
}

const maxLong = "9223372036854775807"

// Keys lists the topic configs by name, sorted (DescribeConfigs order).
var Keys = []Key{
	{Name: "cleanup.policy", Type: kmsg.ConfigTypeList, Default: "delete", Synonyms: syn("log.cleanup.policy"),
		Doc: "\"delete\" discards old segments by retention time or size; \"compact\" keeps the last record per key; both may be listed.", validate: validPolicy},
	{Name: "compression.type", Type: kmsg.ConfigTypeString, Default: "producer", Synonyms: syn("compression.type"),
		Doc:      "Final compression of the topic's batches: uncompressed, gzip, snappy, lz4, zstd, or producer (keep the producer's codec).",
		validate: oneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")},
	{Name: "delete.retention.ms", Type: kmsg.ConfigTypeLong, Default: "86400000", Synonyms: syn("log.cleaner.delete.retention.ms"),
		Doc: "How long tombstones are kept on compacted topics.", validate: long(0)},
	{Name: "file.delete.delay.ms", Type: kmsg.ConfigTypeLong, Default: "60000", Synonyms: syn("log.segment.delete.delay.ms"),
		Doc: "Delay before a deleted segment's files are removed from the file system.", validate: long(0)},
	{Name: "flush.messages", Type: kmsg.ConfigTypeLong, Default: maxLong, Synonyms: syn("log.flush.interval.messages"),
		Doc: "Messages appended between forced fsyncs of the log.", validate: long(1)},
	{Name: "flush.ms", Type: kmsg.ConfigTypeLong, Default: maxLong, Synonyms: syn("log.flush.interval.ms"),
		Doc: "Maximum time between forced fsyncs of the log.", validate: long(0)},
	{Name: "index.interval.bytes", Type: kmsg.ConfigTypeInt, Default: "4096", Synonyms: syn("log.index.interval.bytes"),
		Doc: "Bytes of batches between two entries of the offset index.", validate: integer(0)},
	{Name: "max.compaction.lag.ms", Type: kmsg.ConfigTypeLong, Default: maxLong, Synonyms: syn("log.cleaner.max.compaction.lag.ms"),
		Doc: "Maximum time a record stays uncompacted.", validate: long(1)},
	{Name: "max.message.bytes", Type: kmsg.ConfigTypeInt, Default: "1048588", Synonyms: syn("message.max.bytes"),
		Doc: "Largest record batch size allowed.", validate: integer(0)},
	{Name: "message.downconversion.enable", Type: kmsg.ConfigTypeBoolean, Default: "true", Synonyms: syn("log.message.downconversion.enable"),
		Doc: "Whether old consumers may get down-converted batches.", validate: boolean},
	{Name: "message.timestamp.difference.max.ms", Type: kmsg.ConfigTypeLong, Default: maxLong, Synonyms: syn("log.message.timestamp.difference.max.ms"),
		Doc: "Largest allowed difference between a CreateTime timestamp and the broker's clock.", validate: long(0)},
	{Name: "message.timestamp.type", Type: kmsg.ConfigTypeString, Default: "CreateTime", Synonyms: syn("log.message.timestamp.type"),
		Doc: "CreateTime keeps the producer's timestamp; LogAppendTime stamps the broker's.", validate: oneOf("CreateTime", "LogAppendTime")},
	{Name: "min.cleanable.dirty.ratio", Type: kmsg.ConfigTypeDouble, Default: "0.5", Synonyms: syn("log.cleaner.min.cleanable.ratio"),
		Doc: "Dirty/total ratio above which the log is compacted.", validate: ratio},
	{Name: "min.compaction.lag.ms", Type: kmsg.ConfigTypeLong, Default: "0", Synonyms: syn("log.cleaner.min.compaction.lag.ms"),
		Doc: "Minimum time a record stays uncompacted.", validate: long(0)},
	{Name: "min.insync.replicas", Type: kmsg.ConfigTypeInt, Default: "1", Synonyms: syn("min.insync.replicas"),
		Doc: "Minimum ISR size for acks=all produce to succeed.", validate: integer(1)},
	{Name: "preallocate", Type: kmsg.ConfigTypeBoolean, Default: "false", Synonyms: syn("log.preallocate"),
		Doc: "Preallocate segment files on creation.", validate: boolean},
	{Name: "retention.bytes", Type: kmsg.ConfigTypeLong, Default: "-1", Synonyms: syn("log.retention.bytes"),
		Doc: "Maximum partition size before old segments are deleted; -1 is unlimited.", validate: long(-1 << 62)},
	{Name: "retention.ms", Type: kmsg.ConfigTypeLong, Default: "604800000",
		Synonyms: []Synonym{{"log.retention.ms", 1}, {"log.retention.minutes", 60000}, {"log.retention.hours", 3600000}},
		Doc:      "How long segments are kept before deletion; -1 keeps them forever.", validate: long(-1)},
	{Name: "segment.bytes", Type: kmsg.ConfigTypeInt, Default: "1073741824", Synonyms: syn("log.segment.bytes"),
		Doc: "Segment file size at which the log rolls.", validate: integer(14)},
	{Name: "segment.index.bytes", Type: kmsg.ConfigTypeInt, Default: "10485760", Synonyms: syn("log.index.size.max.bytes"),
		Doc: "Size of the offset index preallocated per segment.", validate: integer(4)},
	{Name: "segment.jitter.ms", Type: kmsg.ConfigTypeLong, Default: "0",
		Synonyms: []Synonym{{"log.roll.jitter.ms", 1}, {"log.roll.jitter.hours", 3600000}},
		Doc:      "Random jitter subtracted from segment.ms.", validate: long(0)},
	{Name: "segment.ms", Type: kmsg.ConfigTypeLong, Default: "604800000",
		Synonyms: []Synonym{{"log.roll.ms", 1}, {"log.roll.hours", 3600000}},
		Doc:      "Age of a segment's first batch at which the log rolls.", validate: long(1)},
	{Name: "unclean.leader.election.enable", Type: kmsg.ConfigTypeBoolean, Default: "false", Synonyms: syn("unclean.leader.election.enable"),
		Doc: "Whether an out-of-sync replica may become leader (possible data loss).", validate: boolean},
}

var byName = func() map[string]*Key {
	m := make(map[string]*Key, len(Keys))
	for i := range Keys {
		m[Keys[i].Name] = &Keys[i]
	}
	return m
}()

// Lookup returns the key named name, or nil for an unknown topic config.
func Lookup(name string) *Key { return byName[name] }

func syn(k string) []Synonym { return []Synonym{{k, 1}} }
