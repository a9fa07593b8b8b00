package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ValueError is a configuration value Kafka would reject: a non-number for a
// number, a value below its minimum, a bad listener URL, a value outside an
// enumeration. The message follows Kafka's ConfigException ("Invalid value V
// for configuration K: reason") so operators recognise it. For topic configs
// the broker answers INVALID_CONFIG (error code 40) with this message.
type ValueError struct {
	Key    string // the configuration key, e.g. "num.partitions"
	Value  string // the value as written
	Reason string // why it is rejected
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("Invalid value %s for configuration %s: %s", e.Value, e.Key, e.Reason)
}

func invalid(key, value, format string, args ...any) error {
	return &ValueError{Key: key, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// kafkaType names Java's type for a bit size, as Kafka's messages do.
func kafkaType(bits int) string {
	switch bits {
	case 16:
		return "SHORT"
	case 32:
		return "INT"
	default:
		return "LONG"
	}
}

// parseInt parses a decimal integer of the given bit size and checks
// value >= min (min = math.MinInt64 for no lower bound).
func parseInt(key, v string, bits int, min int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		return 0, invalid(key, v, "Not a number of type %s", kafkaType(bits))
	}
	if n < min {
		return 0, invalid(key, v, "Value must be at least %d", min)
	}
	return n, nil
}

// parseBool accepts "true"/"false" in any case, as Kafka's ConfigDef does.
func parseBool(key, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, invalid(key, v, "Expected value to be either true or false")
}

// parseDouble parses a floating point value in [min, max].
func parseDouble(key, v string, min, max float64) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) {
		return 0, invalid(key, v, "Not a number of type DOUBLE")
	}
	if f < min || f > max {
		return 0, invalid(key, v, "Value must be in the range [%g, %g]", min, max)
	}
	return f, nil
}

// oneOf checks v against an enumeration (case-sensitive, as Kafka's ValidString).
func oneOf(key, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return invalid(key, v, "String must be one of: %s", strings.Join(allowed, ", "))
}

// splitList splits a Kafka LIST value: comma separated, items trimmed,
// empty items dropped.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseCleanupPolicy validates cleanup.policy / log.cleanup.policy: a list of
// "compact" and "delete". It returns the normalised value and whether
// compaction is on.
func parseCleanupPolicy(key, v string) (string, bool, error) {
	items := splitList(v)
	if len(items) == 0 {
		return "", false, invalid(key, v, "cleanup.policy must not be empty; use delete, compact or compact,delete")
	}
	compact := false
	for _, it := range items {
		if err := oneOf(key, it, "compact", "delete"); err != nil {
			return "", false, invalid(key, v, "Invalid value %s: must be one of compact, delete", it)
		}
		if it == "compact" {
			compact = true
		}
	}
	return strings.Join(items, ","), compact, nil
}

// compressionTypes are compression.type's values (broker and topic).
var compressionTypes = []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}

// timestampTypes are message.timestamp.type's values.
var timestampTypes = []string{"CreateTime", "LogAppendTime"}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
