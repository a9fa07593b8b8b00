package config

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
)

func TestBrokerLogConfig(t *testing.T) {
	b, err := Parse(map[string]string{
		"log.segment.bytes": "1048576", "log.roll.hours": "1", "log.retention.minutes": "10",
		"log.retention.bytes": "5000", "log.flush.interval.messages": "7", "log.flush.interval.ms": "9",
		"log.index.interval.bytes": "100", "log.index.size.max.bytes": "4096", "log.segment.delete.delay.ms": "0",
		"message.max.bytes": "2000", "log.cleanup.policy": "compact,delete",
		"log.cleaner.delete.retention.ms": "500", "log.cleaner.min.cleanable.ratio": "0.25",
		"log.cleaner.min.compaction.lag.ms": "3", "log.cleaner.max.compaction.lag.ms": "4",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := b.LogConfig()
	want := storage.LogConfig{SegmentBytes: 1048576, SegmentMs: 3600000, SegmentIndexBytes: 4096, IndexIntervalBytes: 100,
		RetentionMs: 600000, RetentionBytes: 5000, FlushMessages: 7, FlushMs: 9, FileDeleteDelayMs: 0, MaxMessageBytes: 2000, Compact: true,
		CompressionType: "producer", MessageTimestampDifferenceMaxMs: math.MaxInt64, MessageTimestampBeforeMaxMs: math.MaxInt64, MessageTimestampAfterMaxMs: math.MaxInt64,
		DeleteRetentionMs: 500, MinCleanableDirtyRatio: 0.25, MinCompactionLagMs: 3, MaxCompactionLagMs: 4}
	if got != want {
		t.Errorf("LogConfig\n got %+v\nwant %+v", got, want)
	}
	def, _ := Parse(nil, nil)
	if def.LogConfig() != storage.DefaultLogConfig() {
		t.Errorf("defaults differ from storage.DefaultLogConfig:\n%+v\n%+v", def.LogConfig(), storage.DefaultLogConfig())
	}
}

func TestTopicLogConfig(t *testing.T) {
	base := storage.DefaultLogConfig()
	got, err := TopicLogConfig(base, map[string]string{
		"cleanup.policy": "compact", "retention.ms": "-1", "retention.bytes": "1024", "segment.bytes": "4096",
		"segment.ms": "1000", "segment.index.bytes": "8", "index.interval.bytes": "1", "flush.messages": "1",
		"flush.ms": "0", "max.message.bytes": "100", "file.delete.delay.ms": "5", "min.insync.replicas": "2",
		"compression.type": "zstd", "message.timestamp.type": "LogAppendTime", "unclean.leader.election.enable": "true",
		"delete.retention.ms": "10", "min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "20", "max.compaction.lag.ms": "30",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := storage.LogConfig{SegmentBytes: 4096, SegmentMs: 1000, SegmentIndexBytes: 8, IndexIntervalBytes: 1, RetentionMs: -1,
		RetentionBytes: 1024, FlushMessages: 1, FlushMs: 0, FileDeleteDelayMs: 5, MaxMessageBytes: 100, Compact: true, DeleteDisabled: true,
		CompressionType: "zstd", LogAppendTime: true, MessageTimestampDifferenceMaxMs: math.MaxInt64, MessageTimestampBeforeMaxMs: math.MaxInt64, MessageTimestampAfterMaxMs: math.MaxInt64,
		DeleteRetentionMs: 10, MinCleanableDirtyRatio: 0.01, MinCompactionLagMs: 20, MaxCompactionLagMs: 30}
	if got != want {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if got, _ := TopicLogConfig(base, nil); got != base {
		t.Error("no overrides must return base")
	}
}

func TestTopicConfigErrors(t *testing.T) {
	base := storage.DefaultLogConfig()
	for k, v := range map[string]string{
		"retention.ms": "-2", "segment.bytes": "13", "cleanup.policy": "keep", "min.insync.replicas": "0",
		"compression.type": "brotli", "message.timestamp.type": "x", "segment.ms": "0", "flush.messages": "abc",
		"min.cleanable.dirty.ratio": "1.5", "unclean.leader.election.enable": "1", "max.message.bytes": "-1",
	} {
		got, err := TopicLogConfig(base, map[string]string{k: v})
		var ve *ValueError
		if !errors.As(err, &ve) || ve.Key != k || ve.Value != v {
			t.Errorf("%s=%s: err %v", k, v, err)
		}
		if got != base {
			t.Errorf("%s=%s: config changed on error", k, v)
		}
	}
	_, err := TopicLogConfig(base, map[string]string{"retention.hours": "1"})
	var ue *UnknownTopicConfigError
	if !errors.As(err, &ue) || ue.Key != "retention.hours" || err.Error() != "Unknown topic config name: retention.hours" {
		t.Errorf("unknown key: %v", err)
	}
}

func TestTopicPolicy(t *testing.T) {
	b, _ := Parse(map[string]string{"min.insync.replicas": "2", "compression.type": "gzip"}, nil)
	p, err := b.TopicPolicy(nil)
	if err != nil || p != (TopicPolicy{2, false, "gzip", "CreateTime"}) {
		t.Errorf("defaults: %+v %v", p, err)
	}
	p, err = b.TopicPolicy(map[string]string{"min.insync.replicas": "3", "unclean.leader.election.enable": "TRUE", "message.timestamp.type": "LogAppendTime"})
	if err != nil || p != (TopicPolicy{3, true, "gzip", "LogAppendTime"}) {
		t.Errorf("overrides: %+v %v", p, err)
	}
}

func TestDescribeTopicConfigs(t *testing.T) {
	b, _ := Parse(map[string]string{"log.segment.bytes": "1073741824", "log.retention.hours": "24"}, nil)
	entries := b.DescribeTopicConfigs(map[string]string{"cleanup.policy": "compact"})
	if len(entries) != len(TopicConfigKeys()) {
		t.Fatalf("%d entries, want %d", len(entries), len(TopicConfigKeys()))
	}
	by := map[string]ConfigEntry{}
	for i, e := range entries {
		if i > 0 && entries[i-1].Name >= e.Name {
			t.Errorf("not sorted at %s", e.Name)
		}
		by[e.Name] = e
	}
	check := func(name, value string, src kmsg.ConfigSource, synonyms int) {
		t.Helper()
		e := by[name]
		if e.Value != value || e.Source != src || len(e.Synonyms) != synonyms {
			t.Errorf("%s = %q source %v synonyms %+v; want %q %v %d", name, e.Value, e.Source, e.Synonyms, value, src, synonyms)
		}
	}
	check("cleanup.policy", "compact", kmsg.ConfigSourceDynamicTopicConfig, 2)
	check("segment.bytes", "1073741824", kmsg.ConfigSourceStaticBrokerConfig, 2)
	check("retention.ms", "86400000", kmsg.ConfigSourceStaticBrokerConfig, 2)
	check("retention.bytes", "-1", kmsg.ConfigSourceDefaultConfig, 1)
	check("min.insync.replicas", "1", kmsg.ConfigSourceDefaultConfig, 1)
	if s := by["retention.ms"].Synonyms[0]; s.Name != "log.retention.hours" || s.Value != "24" {
		t.Errorf("retention.ms static synonym %+v", s)
	}
	if s := by["retention.ms"].Synonyms[1]; s.Name != "log.retention.ms" || s.Value != "604800000" {
		t.Errorf("retention.ms default synonym %+v", s)
	}
	for _, k := range TopicConfigKeys() {
		if len(k.BrokerKeys) == 0 || k.validate == nil {
			t.Errorf("%s: incomplete table entry", k)
		}
		if err := k.validate(k.Name, k.Default); err != nil && k.Default != "" {
			t.Errorf("%s: default %q does not validate: %v", k.Name, k.Default, err)
		}
	}
	if _, ok := LookupTopicConfig("segment.ms"); !ok {
		t.Error("segment.ms not found")
	}
	if !strings.Contains(by["flush.ms"].Value, "9223372036854775807") {
		t.Errorf("flush.ms default %q", by["flush.ms"].Value)
	}
}

// TestEveryTopicConfigHasTypeAndDoc: DescribeConfigs v3+ reports each topic
// config's type and documentation from this table.
func TestEveryTopicConfigHasTypeAndDoc(t *testing.T) {
	for _, k := range TopicConfigKeys() {
		if k.Type == kmsg.ConfigTypeUnknown || k.Doc == "" {
			t.Errorf("%s: no type or doc", k.Name)
		}
	}
	if k, _ := LookupTopicConfig("cleanup.policy"); k.Type != kmsg.ConfigTypeList {
		t.Errorf("cleanup.policy type %v, want LIST", k.Type)
	}
	if k, _ := LookupTopicConfig("retention.ms"); k.Type != kmsg.ConfigTypeLong {
		t.Errorf("retention.ms type %v, want LONG", k.Type)
	}
}

// A topic default from a dynamic layer: DYNAMIC_BROKER_CONFIG or
// DYNAMIC_DEFAULT_BROKER_CONFIG, synonyms per-broker, default, static,
// Kafka's default (ConfigHelper.createTopicConfigEntry).
func TestDescribeTopicConfigsDynamic(t *testing.T) {
	static := map[string]string{"log.retention.hours": "24", "log.segment.bytes": "1073741824"}
	defaults := map[string]string{"log.retention.ms": "1000", "compression.type": "gzip"}
	perBroker := map[string]string{"log.retention.ms": "2000"}
	eff, err := Parse(Overlay(static, defaults, perBroker), nil)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]ConfigEntry{}
	for _, e := range eff.DescribeTopicConfigsWith(map[string]string{"segment.bytes": "4096"}, static, DynamicLayers{PerBroker: perBroker, Defaults: defaults}) {
		by[e.Name] = e
	}
	syn := func(name string) string {
		var parts []string
		for _, s := range by[name].Synonyms {
			parts = append(parts, fmt.Sprintf("%v:%s=%s", s.Source, s.Name, s.Value))
		}
		return strings.Join(parts, " ")
	}
	for _, c := range []struct {
		name, value string
		src         kmsg.ConfigSource
		synonyms    string
	}{
		{"retention.ms", "2000", kmsg.ConfigSourceDynamicBrokerConfig,
			"DYNAMIC_BROKER_CONFIG:log.retention.ms=2000 DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=1000 STATIC_BROKER_CONFIG:log.retention.hours=24 DEFAULT_CONFIG:log.retention.ms=604800000"},
		{"compression.type", "gzip", kmsg.ConfigSourceDynamicDefaultBrokerConfig,
			"DYNAMIC_DEFAULT_BROKER_CONFIG:compression.type=gzip DEFAULT_CONFIG:compression.type=producer"},
		{"segment.bytes", "4096", kmsg.ConfigSourceDynamicTopicConfig,
			"DYNAMIC_TOPIC_CONFIG:segment.bytes=4096 STATIC_BROKER_CONFIG:log.segment.bytes=1073741824 DEFAULT_CONFIG:log.segment.bytes=1073741824"},
		{"retention.bytes", "-1", kmsg.ConfigSourceDefaultConfig, "DEFAULT_CONFIG:log.retention.bytes=-1"},
	} {
		if e := by[c.name]; e.Value != c.value || e.Source != c.src || syn(c.name) != c.synonyms {
			t.Errorf("%s = %q %v [%s]; want %q %v [%s]", c.name, e.Value, e.Source, syn(c.name), c.value, c.src, c.synonyms)
		}
	}
}
