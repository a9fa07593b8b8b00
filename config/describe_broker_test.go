package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func synText(e ConfigEntry) string {
	var parts []string
	for _, s := range e.Synonyms {
		parts = append(parts, fmt.Sprintf("%s:%s=%s", s.Source, s.Name, s.Value))
	}
	return strings.Join(parts, ", ")
}

// Every key of the table is described; the file's keys (known or not) are
// STATIC_BROKER_CONFIG, the rest DEFAULT_CONFIG with the default; synonyms
// follow Kafka's order and start at the key itself.
func TestDescribeBrokerConfigs(t *testing.T) {
	b, err := Parse(map[string]string{
		"log.retention.ms":   "1000",
		"log.segment.bytes":  "2048",
		"no.such.key":        "x",
		"background.threads": "4",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ConfigEntry{}
	prev := ""
	for _, e := range b.DescribeBrokerConfigs() {
		if e.Name <= prev {
			t.Fatalf("not sorted: %s after %s", e.Name, prev)
		}
		prev = e.Name
		got[e.Name] = e
		if e.ReadOnly == IsDynamicBrokerConfig(e.Name) {
			t.Errorf("%s: read_only %v, want it only for keys that are not dynamic", e.Name, e.ReadOnly)
		}
	}
	if len(got) != len(brokerKeys)+2 {
		t.Errorf("%d entries, want the %d table keys and 2 more", len(got), len(brokerKeys))
	}
	const st, def = kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigSourceDefaultConfig
	for _, w := range []struct {
		name, value string
		null        bool
		src         kmsg.ConfigSource
		syns        string
	}{
		{"log.retention.ms", "1000", false, st, "STATIC_BROKER_CONFIG:log.retention.ms=1000, DEFAULT_CONFIG:log.retention.hours=168"},
		{"log.retention.minutes", "", true, def, ""},
		{"log.retention.hours", "168", false, def, "DEFAULT_CONFIG:log.retention.hours=168"},
		{"log.segment.bytes", "2048", false, st, "STATIC_BROKER_CONFIG:log.segment.bytes=2048, DEFAULT_CONFIG:log.segment.bytes=1073741824"},
		{"num.partitions", "1", false, def, "DEFAULT_CONFIG:num.partitions=1"},
		{"log.cleaner.min.cleanable.ratio", "0.5", false, def, "DEFAULT_CONFIG:log.cleaner.min.cleanable.ratio=0.5"},
		{"group.min.session.timeout.ms", "6000", false, def, "DEFAULT_CONFIG:group.min.session.timeout.ms=6000"},
		{"offsets.retention.check.interval.ms", "600000", false, def, "DEFAULT_CONFIG:offsets.retention.check.interval.ms=600000"},
		{"offset.metadata.max.bytes", "4096", false, def, "DEFAULT_CONFIG:offset.metadata.max.bytes=4096"},
		{"log.cleanup.policy", "delete", false, def, "DEFAULT_CONFIG:log.cleanup.policy=delete"},
		{"log.format", "console", false, def, "DEFAULT_CONFIG:log.format=console"},
		{"advertised.listeners", "", true, def, ""},
		{"no.such.key", "x", false, st, "STATIC_BROKER_CONFIG:no.such.key=x"},
		{"background.threads", "4", false, st, "STATIC_BROKER_CONFIG:background.threads=4"},
	} {
		e, ok := got[w.name]
		if !ok {
			t.Errorf("%s missing", w.name)
			continue
		}
		if e.Value != w.value || e.Null != w.null || e.Source != w.src || synText(e) != w.syns {
			t.Errorf("%s = %q null=%v %v {%s}; want %q null=%v %v {%s}", w.name, e.Value, e.Null, e.Source, synText(e), w.value, w.null, w.src, w.syns)
		}
	}
	if e := got["log.segment.bytes"]; e.Type != kmsg.ConfigTypeInt {
		t.Errorf("log.segment.bytes type %v", e.Type)
	}
	if a, b := got["offsets.retention.check.interval.ms"].Type, got["offset.metadata.max.bytes"].Type; a != kmsg.ConfigTypeLong || b != kmsg.ConfigTypeInt {
		t.Errorf("offsets.retention.check.interval.ms type %v, offset.metadata.max.bytes type %v; want LONG, INT as Kafka", a, b)
	}
	// An empty file: everything is a default.
	empty, _ := Parse(nil, nil)
	for _, e := range empty.DescribeBrokerConfigs() {
		if e.Source != def {
			t.Errorf("empty file: %s source %v", e.Name, e.Source)
		}
	}
}
