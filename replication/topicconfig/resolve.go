package topicconfig

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
)

// InvalidError is a rejected topic config (Kafka INVALID_CONFIG); Error()
// is the message sent back to the client.
type InvalidError struct {
	Name, Value string
	Reason      string
}

func (e *InvalidError) Error() string {
	if e.Value == "" && strings.HasPrefix(e.Reason, "Unknown") {
		return e.Reason
	}
	return fmt.Sprintf("Invalid value %s for configuration %s: %s", e.Value, e.Name, e.Reason)
}

// Validate checks topic overrides: every name known, every value valid.
// The first problem is returned as *InvalidError (sorted by name, so the
// answer is deterministic).
func Validate(overrides map[string]string) error {
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		k := Lookup(n)
		if k == nil {
			return &InvalidError{Name: n, Reason: "Unknown topic config name: " + n}
		}
		if err := k.validate(overrides[n]); err != nil {
			return &InvalidError{Name: n, Value: overrides[n], Reason: err.Error()}
		}
	}
	return nil
}

// Value is a topic config's effective value and where it comes from.
type Value struct {
	Key      *Key
	Value    string
	Source   kmsg.ConfigSource // TOPIC_CONFIG, STATIC_BROKER_CONFIG or DEFAULT_CONFIG
	Synonyms []SynonymValue    // most specific first, ending with the default
}

// SynonymValue is one entry of DescribeConfigs' synonyms list.
type SynonymValue struct {
	Name   string
	Value  string
	Source kmsg.ConfigSource
}

// Resolve computes every topic config's effective value from the topic's
// overrides and the broker's server.properties (brokerRaw, as read).
func Resolve(overrides, brokerRaw map[string]string) []Value {
	out := make([]Value, 0, len(Keys))
	for i := range Keys {
		out = append(out, resolveKey(&Keys[i], overrides, brokerRaw))
	}
	return out
}

func resolveKey(k *Key, overrides, brokerRaw map[string]string) Value {
	v := Value{Key: k}
	if ov, ok := overrides[k.Name]; ok {
		v.Synonyms = append(v.Synonyms, SynonymValue{k.Name, ov, kmsg.ConfigSourceDynamicTopicConfig})
	}
	for _, s := range k.Synonyms {
		if bv, ok := brokerRaw[s.Key]; ok {
			v.Synonyms = append(v.Synonyms, SynonymValue{s.Key, strings.TrimSpace(bv), kmsg.ConfigSourceStaticBrokerConfig})
		}
	}
	v.Synonyms = append(v.Synonyms, SynonymValue{k.Synonyms[0].Key, k.Default, kmsg.ConfigSourceDefaultConfig})
	first := v.Synonyms[0]
	v.Source = first.Source
	v.Value = first.Value
	if first.Source == kmsg.ConfigSourceStaticBrokerConfig {
		v.Value = scale(k, first.Name, first.Value)
	}
	return v
}

// scale converts a broker synonym's value to the topic config's unit.
func scale(k *Key, synonym, value string) string {
	for _, s := range k.Synonyms {
		if s.Key == synonym && s.Factor != 1 {
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return value
			}
			if n > 0 && n > math.MaxInt64/s.Factor {
				return maxLong
			}
			return strconv.FormatInt(n*s.Factor, 10)
		}
	}
	return value
}

// LogConfig computes a topic's storage.LogConfig from its overrides and
// the broker's server.properties. Overrides must have passed Validate;
// unparsable broker values fall back to Kafka's defaults (config.Load
// rejects them at start-up anyway).
func LogConfig(overrides, brokerRaw map[string]string) storage.LogConfig {
	c := storage.DefaultLogConfig()
	for _, v := range Resolve(overrides, brokerRaw) {
		n, err := strconv.ParseInt(v.Value, 10, 64)
		isNum := err == nil
		switch v.Key.Name {
		case "segment.bytes":
			if isNum {
				c.SegmentBytes = n
			}
		case "segment.ms":
			if isNum {
				c.SegmentMs = n
			}
		case "segment.index.bytes":
			if isNum {
				c.SegmentIndexBytes = int32(n)
			}
		case "index.interval.bytes":
			if isNum {
				c.IndexIntervalBytes = int32(n)
			}
		case "retention.ms":
			if isNum {
				c.RetentionMs = n
			}
		case "retention.bytes":
			if isNum {
				c.RetentionBytes = n
			}
		case "flush.messages":
			if isNum {
				c.FlushMessages = n
			}
		case "flush.ms":
			if isNum {
				c.FlushMs = n
			}
		case "file.delete.delay.ms":
			if isNum {
				c.FileDeleteDelayMs = n
			}
		case "max.message.bytes":
			if isNum {
				c.MaxMessageBytes = int32(n)
			}
		case "cleanup.policy":
			for _, p := range splitList(v.Value) {
				if p == "compact" {
					c.Compact = true
				}
			}
		}
	}
	return c
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func long(min int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("Expected value to be a 64-bit integer (long)")
		}
		if n < min {
			return fmt.Errorf("Value must be at least %d", min)
		}
		return nil
	}
}

func integer(min int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return fmt.Errorf("Expected value to be a 32-bit integer")
		}
		if n < min {
			return fmt.Errorf("Value must be at least %d", min)
		}
		return nil
	}
}

func boolean(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "false":
		return nil
	}
	return fmt.Errorf("Expected value to be either true or false")
}

func ratio(v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return fmt.Errorf("Expected value to be a double")
	}
	if f < 0 || f > 1 {
		return fmt.Errorf("Value must be between 0 and 1")
	}
	return nil
}

func oneOf(allowed ...string) func(string) error {
	return func(v string) error {
		for _, a := range allowed {
			if strings.TrimSpace(v) == a {
				return nil
			}
		}
		return fmt.Errorf("String must be one of: %s", strings.Join(allowed, ", "))
	}
}

func validPolicy(v string) error {
	ps := splitList(v)
	if len(ps) == 0 {
		return fmt.Errorf("Empty list")
	}
	for _, p := range ps {
		if p != "compact" && p != "delete" {
			return fmt.Errorf("String must be one of: compact, delete")
		}
	}
	return nil
}
