package config

import (
	"strings"
	"testing"
)

// GroupCoordinatorConfig's rules for the coordinator keys.
func TestCoordinatorKeysValidation(t *testing.T) {
	for kv, want := range map[[2]string]string{
		{"offsets.commit.required.acks", "-2"}:          "offsets.commit.required.acks must be greater or equal to -1 and less or equal to offsets.topic.replication.factor",
		{"offsets.commit.required.acks", "4"}:           "less or equal to offsets.topic.replication.factor",
		{"offsets.commit.required.acks", "2"}:           "INVALID_REQUIRED_ACKS",
		{"offsets.topic.compression.codec", "5"}:        "Unknown compression type id: 5",
		{"offsets.topic.compression.codec", "-1"}:       "Unknown compression type id: -1",
		{"offsets.commit.timeout.ms", "0"}:              "Value must be at least 1",
		{"offsets.load.buffer.size", "0"}:               "Value must be at least 1",
		{"transaction.state.log.load.buffer.size", "0"}: "Value must be at least 1",
		{"request.timeout.ms", "-1"}:                    "Value must be at least 0",
		{"offsets.commit.required.acks", "1"}:           "",
		{"offsets.commit.required.acks", "0"}:           "",
		{"offsets.topic.compression.codec", "3"}:        "",
	} {
		_, err := Parse(map[string]string{kv[0]: kv[1]}, nil)
		switch {
		case want == "" && err != nil:
			t.Errorf("%v: %v", kv, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%v: got %v, want %q", kv, err, want)
		}
	}
}
