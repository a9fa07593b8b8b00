package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
)

// TopicConfigKey describes one topic-level config (Kafka's LogConfig /
// TopicConfig): its name, the server.properties key(s) that set its
// broker-wide default, and Kafka's default. DescribeConfigs uses it.
type TopicConfigKey struct {
	Name       string          // topic config name, e.g. "retention.ms"
	BrokerKeys []string        // broker default keys, highest precedence first (e.g. log.retention.ms, .minutes, .hours); BrokerKeys[0] is the one DescribeConfigs synonyms name
	Default    string          // Kafka's default when neither topic nor broker sets it
	ReadOnly   bool            // never alterable (no topic config is read-only today)
	Sensitive  bool            // value hidden in DescribeConfigs (none today)
	Type       kmsg.ConfigType // DescribeConfigs v3+ config_type
	Doc        string          // DescribeConfigs v3+ documentation, one line

	validate func(key, v string) error
	apply    func(c *storage.LogConfig, p *TopicPolicy, v string) // v already validated
	broker   func(b *Broker) string                               // the broker's resolved value
}

// TopicPolicy holds the topic configs that are not storage-level: the
// partition and produce path read them. Field comments name the topic
// config and its broker default key.
type TopicPolicy struct {
	MinInsyncReplicas     int    // min.insync.replicas (min.insync.replicas), default 1
	UncleanLeaderElection bool   // unclean.leader.election.enable (same key), default false
	CompressionType       string // compression.type (compression.type), default "producer"
	MessageTimestampType  string // message.timestamp.type (log.message.timestamp.type), default "CreateTime"
}

// UnknownTopicConfigError is a topic config name Kafka does not define
// (CreateTopics/AlterConfigs answer INVALID_CONFIG, error code 40).
type UnknownTopicConfigError struct{ Key string }

func (e *UnknownTopicConfigError) Error() string { return "Unknown topic config name: " + e.Key }

func vInt(bits int, min int64) func(string, string) error {
	return func(k, v string) error { _, err := parseInt(k, v, bits, min); return err }
}
func vBool(k, v string) error   { _, err := parseBool(k, v); return err }
func vAny(string, string) error { return nil }

// vNoPreallocate accepts preallocate / log.preallocate false only: Gregor
// takes a segment's file size as its end (recovery, sendfile regions,
// retention by size), so a preallocated .log's zero tail would be read as
// records; true is refused rather than accepted and ignored.
func vNoPreallocate(k, v string) error {
	on, err := parseBool(k, v)
	if err != nil {
		return err
	}
	if on {
		return invalid(k, v, "Gregor does not preallocate segment files; only false is supported")
	}
	return nil
}
func vEnum(allowed ...string) func(string, string) error {
	return func(k, v string) error { return oneOf(k, v, allowed...) }
}
func vRatio(k, v string) error  { _, err := parseDouble(k, v, 0, 1); return err }
func vPolicy(k, v string) error { _, _, err := parseCleanupPolicy(k, v); return err }

// applyCleanupPolicy sets Compact and DeleteDisabled from a validated
// cleanup.policy list ("delete", "compact" or both).
func applyCleanupPolicy(c *storage.LogConfig, v string) {
	norm, compact, err := parseCleanupPolicy("", v)
	if err != nil { // unset (a zero Broker): Kafka's default "delete"
		c.Compact, c.DeleteDisabled = false, false
		return
	}
	c.Compact = compact
	c.DeleteDisabled = !strings.Contains(","+norm+",", ",delete,")
}

func atoi64(v string) int64 { n, _ := strconv.ParseInt(v, 10, 64); return n }
func i64(n int64) string    { return strconv.FormatInt(n, 10) }

// topicConfigKeys is the table, sorted by name. Minimums follow Kafka's
// LogConfig validators.
var topicConfigKeys = []TopicConfigKey{
	{Name: "cleanup.policy", Type: kmsg.ConfigTypeList, Doc: "\"delete\" discards old segments by retention time or size; \"compact\" keeps the last record per key; both may be listed.", BrokerKeys: []string{"log.cleanup.policy"}, Default: "delete", validate: vPolicy,
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { applyCleanupPolicy(c, v) },
		broker: func(b *Broker) string { return b.LogCleanupPolicy }},
	{Name: "compression.type", Type: kmsg.ConfigTypeString, Doc: "Final compression of the topic's batches: uncompressed, gzip, snappy, lz4, zstd, or producer (keep the producer's codec).", BrokerKeys: []string{"compression.type"}, Default: "producer", validate: vEnum(compressionTypes...),
		apply:  func(c *storage.LogConfig, p *TopicPolicy, v string) { p.CompressionType, c.CompressionType = v, v },
		broker: func(b *Broker) string { return b.CompressionType }},
	{Name: "delete.retention.ms", Type: kmsg.ConfigTypeLong, Doc: "How long tombstones are kept on compacted topics.", BrokerKeys: []string{"log.cleaner.delete.retention.ms"}, Default: "86400000", validate: vInt(64, 0),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.DeleteRetentionMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogCleanerDeleteRetentionMs) }},
	{Name: "file.delete.delay.ms", Type: kmsg.ConfigTypeLong, Doc: "Delay before a deleted segment's files are removed from the file system.", BrokerKeys: []string{"log.segment.delete.delay.ms"}, Default: "60000", validate: vInt(64, 0),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.FileDeleteDelayMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogSegmentDeleteDelayMs) }},
	{Name: "flush.messages", Type: kmsg.ConfigTypeLong, Doc: "Messages appended between forced fsyncs of the log.", BrokerKeys: []string{"log.flush.interval.messages"}, Default: i64(math.MaxInt64), validate: vInt(64, 1),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.FlushMessages = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogFlushIntervalMessages) }},
	{Name: "flush.ms", Type: kmsg.ConfigTypeLong, Doc: "Maximum time between forced fsyncs of the log.", BrokerKeys: []string{"log.flush.interval.ms"}, Default: i64(math.MaxInt64), validate: vInt(64, 0),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.FlushMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogFlushIntervalMs) }},
	{Name: "follower.replication.throttled.replicas", Type: kmsg.ConfigTypeList, Doc: "Replicas whose follower fetches are throttled (\"partition:broker,…\" or \"*\").", BrokerKeys: []string{"follower.replication.throttled.replicas"}, Default: "", validate: ValidateThrottledReplicas},
	{Name: "index.interval.bytes", Type: kmsg.ConfigTypeInt, Doc: "Bytes of batches between two entries of the offset index.", BrokerKeys: []string{"log.index.interval.bytes"}, Default: "4096", validate: vInt(32, 0),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.IndexIntervalBytes = int32(atoi64(v)) },
		broker: func(b *Broker) string { return i64(int64(b.LogIndexIntervalBytes)) }},
	{Name: "leader.replication.throttled.replicas", Type: kmsg.ConfigTypeList, Doc: "Replicas whose leader-side replication is throttled (\"partition:broker,…\" or \"*\").", BrokerKeys: []string{"leader.replication.throttled.replicas"}, Default: "", validate: ValidateThrottledReplicas},
	{Name: "max.compaction.lag.ms", Type: kmsg.ConfigTypeLong, Doc: "Maximum time a record stays uncompacted.", BrokerKeys: []string{"log.cleaner.max.compaction.lag.ms"}, Default: i64(math.MaxInt64), validate: vInt(64, 1),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.MaxCompactionLagMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogCleanerMaxCompactionLagMs) }},
	{Name: "max.message.bytes", Type: kmsg.ConfigTypeInt, Doc: "Largest record batch size allowed.", BrokerKeys: []string{"message.max.bytes"}, Default: "1048588", validate: vInt(32, 0),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.MaxMessageBytes = int32(atoi64(v)) },
		broker: func(b *Broker) string { return i64(int64(b.MessageMaxBytes)) }},
	{Name: "message.downconversion.enable", Type: kmsg.ConfigTypeBoolean, Doc: "Whether old consumers may get down-converted batches.", BrokerKeys: []string{"log.message.downconversion.enable"}, Default: "true", validate: vBool,
		apply: func(c *storage.LogConfig, _ *TopicPolicy, v string) {
			on, _ := parseBool("message.downconversion.enable", v)
			c.DownConversionDisabled = !on
		},
		broker: func(b *Broker) string { return strconv.FormatBool(b.LogMessageDownConversionEnable) }},
	{Name: "message.format.version", Type: kmsg.ConfigTypeString, Doc: "Record batch format version (ignored: always magic 2 on disk).", BrokerKeys: []string{"log.message.format.version"}, Default: "3.0-IV1", validate: vAny},
	{Name: "message.timestamp.after.max.ms", Type: kmsg.ConfigTypeLong, Doc: "Largest allowed amount a CreateTime timestamp may lie after the broker's clock (KIP-937; default: message.timestamp.difference.max.ms).", BrokerKeys: []string{"log.message.timestamp.after.max.ms"}, Default: i64(math.MaxInt64), validate: vInt(64, 0),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.MessageTimestampAfterMaxMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogMessageTimestampAfterMaxMs) }},
	{Name: "message.timestamp.before.max.ms", Type: kmsg.ConfigTypeLong, Doc: "Largest allowed amount a CreateTime timestamp may lie before the broker's clock (KIP-937; default: message.timestamp.difference.max.ms).", BrokerKeys: []string{"log.message.timestamp.before.max.ms"}, Default: i64(math.MaxInt64), validate: vInt(64, 0),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.MessageTimestampBeforeMaxMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogMessageTimestampBeforeMaxMs) }},
	{Name: "message.timestamp.difference.max.ms", Type: kmsg.ConfigTypeLong, Doc: "Largest allowed difference between a CreateTime timestamp and the broker's clock.", BrokerKeys: []string{"log.message.timestamp.difference.max.ms"}, Default: i64(math.MaxInt64), validate: vInt(64, 0),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.MessageTimestampDifferenceMaxMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogMessageTimestampDifferenceMaxMs) }},
	{Name: "message.timestamp.type", Type: kmsg.ConfigTypeString, Doc: "CreateTime keeps the producer's timestamp; LogAppendTime stamps the broker's.", BrokerKeys: []string{"log.message.timestamp.type"}, Default: "CreateTime", validate: vEnum(timestampTypes...),
		apply: func(c *storage.LogConfig, p *TopicPolicy, v string) {
			p.MessageTimestampType, c.LogAppendTime = v, v == "LogAppendTime"
		},
		broker: func(b *Broker) string { return b.MessageTimestampType }},
	{Name: "min.cleanable.dirty.ratio", Type: kmsg.ConfigTypeDouble, Doc: "Dirty/total ratio above which the log is compacted.", BrokerKeys: []string{"log.cleaner.min.cleanable.ratio"}, Default: "0.5", validate: vRatio,
		apply: func(c *storage.LogConfig, _ *TopicPolicy, v string) {
			c.MinCleanableDirtyRatio, _ = strconv.ParseFloat(v, 64)
		},
		broker: func(b *Broker) string { return strconv.FormatFloat(b.LogCleanerMinCleanableRatio, 'g', -1, 64) }},
	{Name: "min.compaction.lag.ms", Type: kmsg.ConfigTypeLong, Doc: "Minimum time a record stays uncompacted.", BrokerKeys: []string{"log.cleaner.min.compaction.lag.ms"}, Default: "0", validate: vInt(64, 0),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.MinCompactionLagMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogCleanerMinCompactionLagMs) }},
	{Name: "min.insync.replicas", Type: kmsg.ConfigTypeInt, Doc: "Minimum ISR size for acks=all produce to succeed.", BrokerKeys: []string{"min.insync.replicas"}, Default: "1", validate: vInt(32, 1),
		apply:  func(_ *storage.LogConfig, p *TopicPolicy, v string) { p.MinInsyncReplicas = int(atoi64(v)) },
		broker: func(b *Broker) string { return i64(int64(b.MinInsyncReplicas)) }},
	{Name: "preallocate", Type: kmsg.ConfigTypeBoolean, Doc: "Preallocate segment files on creation.", BrokerKeys: []string{"log.preallocate"}, Default: "false", validate: vNoPreallocate},
	{Name: "retention.bytes", Type: kmsg.ConfigTypeLong, Doc: "Maximum partition size before old segments are deleted; -1 is unlimited.", BrokerKeys: []string{"log.retention.bytes"}, Default: "-1", validate: vInt(64, noMin),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.RetentionBytes = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogRetentionBytes) }},
	{Name: "retention.ms", Type: kmsg.ConfigTypeLong, Doc: "How long segments are kept before deletion; -1 keeps them forever.", BrokerKeys: []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}, Default: "604800000", validate: vInt(64, -1),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.RetentionMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogRetentionMs) }},
	{Name: "segment.bytes", Type: kmsg.ConfigTypeInt, Doc: "Segment file size at which the log rolls.", BrokerKeys: []string{"log.segment.bytes"}, Default: "1073741824", validate: vInt(32, 14),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.SegmentBytes = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogSegmentBytes) }},
	{Name: "segment.index.bytes", Type: kmsg.ConfigTypeInt, Doc: "Size of the offset index preallocated per segment.", BrokerKeys: []string{"log.index.size.max.bytes"}, Default: "10485760", validate: vInt(32, 4),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.SegmentIndexBytes = int32(atoi64(v)) },
		broker: func(b *Broker) string { return i64(int64(b.LogIndexSizeMaxBytes)) }},
	{Name: "segment.jitter.ms", Type: kmsg.ConfigTypeLong, Doc: "Random jitter subtracted from segment.ms.", BrokerKeys: []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}, Default: "0", validate: vInt(64, 0),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.SegmentJitterMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogRollJitterMs) }},
	{Name: "segment.ms", Type: kmsg.ConfigTypeLong, Doc: "Age of a segment's first batch at which the log rolls.", BrokerKeys: []string{"log.roll.ms", "log.roll.hours"}, Default: "604800000", validate: vInt(64, 1),
		apply:  func(c *storage.LogConfig, _ *TopicPolicy, v string) { c.SegmentMs = atoi64(v) },
		broker: func(b *Broker) string { return i64(b.LogRollMs) }},
	{Name: "unclean.leader.election.enable", Type: kmsg.ConfigTypeBoolean, Doc: "Whether an out-of-sync replica may become leader (possible data loss).", BrokerKeys: []string{"unclean.leader.election.enable"}, Default: "false", validate: vBool,
		apply: func(_ *storage.LogConfig, p *TopicPolicy, v string) {
			p.UncleanLeaderElection, _ = parseBool("", v)
		},
		broker: func(b *Broker) string { return strconv.FormatBool(b.UncleanLeaderElection) }},
}

var topicConfigIndex = func() map[string]*TopicConfigKey {
	m := make(map[string]*TopicConfigKey, len(topicConfigKeys))
	for i := range topicConfigKeys {
		m[topicConfigKeys[i].Name] = &topicConfigKeys[i]
	}
	return m
}()

// TopicConfigKeys returns the topic config table sorted by name (a copy).
func TopicConfigKeys() []TopicConfigKey {
	return append([]TopicConfigKey(nil), topicConfigKeys...)
}

// LookupTopicConfig returns the table entry for a topic config name.
func LookupTopicConfig(name string) (TopicConfigKey, bool) {
	k, ok := topicConfigIndex[name]
	if !ok {
		return TopicConfigKey{}, false
	}
	return *k, true
}

// ValidateTopicConfigs checks topic config overrides (CreateTopics configs,
// AlterConfigs / IncrementalAlterConfigs on a topic). Keys are checked in
// name order; the first problem is returned: *UnknownTopicConfigError or
// *ValueError. Values are trimmed before checking, as Kafka does.
func ValidateTopicConfigs(overrides map[string]string) error {
	for _, k := range sortedKeys(overrides) {
		tk, ok := topicConfigIndex[k]
		if !ok {
			return &UnknownTopicConfigError{Key: k}
		}
		if err := tk.validate(k, strings.TrimSpace(overrides[k])); err != nil {
			return err
		}
	}
	return nil
}

// TopicLogConfig returns base (the broker's LogConfig) with a topic's
// overrides applied: cleanup.policy, retention.ms, retention.bytes,
// segment.bytes, segment.ms, segment.index.bytes, index.interval.bytes,
// flush.messages, flush.ms, max.message.bytes, file.delete.delay.ms,
// compression.type, message.timestamp.type,
// message.timestamp.difference.max.ms, delete.retention.ms,
// min.cleanable.dirty.ratio, min.compaction.lag.ms, max.compaction.lag.ms. Other valid topic configs
// (min.insync.replicas, unclean.leader.election.enable… see
// Broker.TopicPolicy) are validated but do not change the LogConfig.
// Errors as ValidateTopicConfigs; on error base is returned unchanged.
func TopicLogConfig(base storage.LogConfig, overrides map[string]string) (storage.LogConfig, error) {
	if err := ValidateTopicConfigs(overrides); err != nil {
		return base, err
	}
	c := base
	var p TopicPolicy
	for _, k := range sortedKeys(overrides) {
		if tk := topicConfigIndex[k]; tk.apply != nil {
			tk.apply(&c, &p, strings.TrimSpace(overrides[k]))
		}
	}
	return c, nil
}

// LogConfig returns the broker-wide log defaults (the LogConfig of a topic
// without overrides): log.segment.bytes, log.roll.ms/hours,
// log.roll.jitter.ms/hours,
// log.index.size.max.bytes, log.index.interval.bytes,
// log.retention.ms/minutes/hours, log.retention.bytes,
// log.flush.interval.messages, log.flush.interval.ms,
// log.segment.delete.delay.ms, message.max.bytes, log.cleanup.policy,
// compression.type, log.message.timestamp.type,
// log.message.timestamp.difference.max.ms (and its KIP-937 successors
// log.message.timestamp.before/after.max.ms), log.cleaner.delete.retention.ms,
// log.cleaner.min.cleanable.ratio, log.cleaner.min/max.compaction.lag.ms.
func (b *Broker) LogConfig() storage.LogConfig {
	c := storage.LogConfig{
		SegmentBytes:       b.LogSegmentBytes,
		SegmentMs:          b.LogRollMs,
		SegmentJitterMs:    b.LogRollJitterMs,
		SegmentIndexBytes:  b.LogIndexSizeMaxBytes,
		IndexIntervalBytes: b.LogIndexIntervalBytes,
		RetentionMs:        b.LogRetentionMs,
		RetentionBytes:     b.LogRetentionBytes,
		FlushMessages:      b.LogFlushIntervalMessages,
		FlushMs:            b.LogFlushIntervalMs,
		FileDeleteDelayMs:  b.LogSegmentDeleteDelayMs,
		MaxMessageBytes:    b.MessageMaxBytes,

		CompressionType:                 b.CompressionType,
		LogAppendTime:                   b.MessageTimestampType == "LogAppendTime",
		MessageTimestampDifferenceMaxMs: b.LogMessageTimestampDifferenceMaxMs,
		MessageTimestampBeforeMaxMs:     b.LogMessageTimestampBeforeMaxMs,
		MessageTimestampAfterMaxMs:      b.LogMessageTimestampAfterMaxMs,
		DownConversionDisabled:          !b.LogMessageDownConversionEnable,

		DeleteRetentionMs:      b.LogCleanerDeleteRetentionMs,
		MinCleanableDirtyRatio: b.LogCleanerMinCleanableRatio,
		MinCompactionLagMs:     b.LogCleanerMinCompactionLagMs,
		MaxCompactionLagMs:     b.LogCleanerMaxCompactionLagMs,
	}
	applyCleanupPolicy(&c, b.LogCleanupPolicy)
	return c
}

// TopicPolicy returns the non-storage topic settings: the broker defaults
// (min.insync.replicas, unclean.leader.election.enable, compression.type,
// log.message.timestamp.type) with the topic's overrides applied. Errors as
// ValidateTopicConfigs.
func (b *Broker) TopicPolicy(overrides map[string]string) (TopicPolicy, error) {
	p := TopicPolicy{
		MinInsyncReplicas:     b.MinInsyncReplicas,
		UncleanLeaderElection: b.UncleanLeaderElection,
		CompressionType:       b.CompressionType,
		MessageTimestampType:  b.MessageTimestampType,
	}
	if err := ValidateTopicConfigs(overrides); err != nil {
		return p, err
	}
	var c storage.LogConfig
	for _, k := range sortedKeys(overrides) {
		if tk := topicConfigIndex[k]; tk.apply != nil {
			tk.apply(&c, &p, strings.TrimSpace(overrides[k]))
		}
	}
	return p, nil
}

// ConfigEntry is one DescribeConfigs result entry (DescribeConfigsResponse
// Resources[].Configs[]).
type ConfigEntry struct {
	Name      string
	Value     string
	Null      bool              // the value is null (a broker key whose default is null); Value is ""
	Source    kmsg.ConfigSource // TOPIC_CONFIG (1), STATIC_BROKER_CONFIG (4) or DEFAULT_CONFIG (5)
	ReadOnly  bool
	Sensitive bool
	Type      kmsg.ConfigType // DescribeConfigs v3+ config_type (broker entries; topic entries: TopicConfigKey.Type)
	// Synonyms are the lower-precedence sources of the value, highest first
	// (DescribeConfigs v1+ IncludeSynonyms): the broker's static value when
	// server.properties sets it, then the default.
	Synonyms []ConfigSynonym
}

// ConfigSynonym is one DescribeConfigs synonym: a config name (topic config
// or broker key), its value there, and where that value comes from.
type ConfigSynonym struct {
	Name   string
	Value  string
	Source kmsg.ConfigSource
}

// DescribeTopicConfigs returns every topic config for a topic with the given
// overrides, sorted by name: the override (TOPIC_CONFIG), else the broker's
// value when server.properties sets one of its broker keys
// (STATIC_BROKER_CONFIG), else Kafka's default (DEFAULT_CONFIG). Overrides
// with unknown names are skipped (they were rejected when set).
func (b *Broker) DescribeTopicConfigs(overrides map[string]string) []ConfigEntry {
	return b.DescribeTopicConfigsWith(overrides, b.Raw, DynamicLayers{})
}

// DescribeTopicConfigsWith is DescribeTopicConfigs on a broker's effective
// config b (server.properties overlaid by the dynamic layers dyn; static
// is server.properties as read): a topic config without an override
// whose broker key a dynamic layer sets comes from there, source
// DYNAMIC_BROKER_CONFIG (/config/brokers/<id>) or
// DYNAMIC_DEFAULT_BROKER_CONFIG (/config/brokers/<default>), with synonyms
// in Kafka's order (ConfigHelper.createTopicConfigEntry: the override,
// then the broker key per layer: per-broker dynamic, default dynamic,
// static, default). So with log.retention.ms=1000 as the dynamic default,
// retention.ms is 1000, DYNAMIC_DEFAULT_BROKER_CONFIG, synonyms
// [DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=1000,
// DEFAULT_CONFIG:log.retention.hours=168].
func (b *Broker) DescribeTopicConfigsWith(overrides, static map[string]string, dyn DynamicLayers) []ConfigEntry {
	out := make([]ConfigEntry, 0, len(topicConfigKeys))
	for _, tk := range topicConfigKeys {
		e := ConfigEntry{Name: tk.Name, ReadOnly: tk.ReadOnly, Sensitive: tk.Sensitive}
		if v, ok := overrides[tk.Name]; ok {
			e.Synonyms = append(e.Synonyms, ConfigSynonym{Name: tk.Name, Value: strings.TrimSpace(v), Source: kmsg.ConfigSourceDynamicTopicConfig})
		}
		bv, _, set := b.staticValue(tk) // the effective broker value, whichever layer set it
		for _, layer := range []struct {
			m   map[string]string
			src kmsg.ConfigSource
		}{{dyn.PerBroker, kmsg.ConfigSourceDynamicBrokerConfig}, {dyn.Defaults, kmsg.ConfigSourceDynamicDefaultBrokerConfig}} {
			for _, k := range tk.BrokerKeys {
				if v, ok := layer.m[k]; ok && strings.TrimSpace(v) != "" {
					e.Synonyms = append(e.Synonyms, ConfigSynonym{Name: k, Value: strings.TrimSpace(v), Source: layer.src})
				}
			}
		}
		for _, k := range tk.BrokerKeys {
			if static[k] != "" {
				// The synonym carries the broker key's own value and unit
				// (log.retention.hours=168); the entry's value is in the topic
				// config's unit (retention.ms=604800000).
				e.Synonyms = append(e.Synonyms, ConfigSynonym{Name: k, Value: static[k], Source: kmsg.ConfigSourceStaticBrokerConfig})
				break
			}
		}
		e.Synonyms = append(e.Synonyms, ConfigSynonym{Name: tk.BrokerKeys[0], Value: tk.Default, Source: kmsg.ConfigSourceDefaultConfig})
		switch e.Source = e.Synonyms[0].Source; e.Source {
		case kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigSourceDynamicBrokerConfig, kmsg.ConfigSourceDynamicDefaultBrokerConfig:
			if set {
				e.Value = bv
			} else {
				e.Value = e.Synonyms[0].Value
			}
		default:
			e.Value = e.Synonyms[0].Value
		}
		out = append(out, e)
	}
	return out
}

// staticValue reports the broker's value for a topic config when
// server.properties set one of its broker keys, with the key that was set.
func (b *Broker) staticValue(tk TopicConfigKey) (value, key string, ok bool) {
	for _, k := range tk.BrokerKeys {
		if has(b, k) {
			if tk.broker != nil {
				return tk.broker(b), k, true
			}
			return b.Raw[k], k, true
		}
	}
	return "", "", false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// String renders a TopicConfigKey for tables and debugging.
func (k TopicConfigKey) String() string {
	return fmt.Sprintf("%s (broker %s, default %q)", k.Name, strings.Join(k.BrokerKeys, "/"), k.Default)
}
