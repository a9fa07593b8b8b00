package zkmeta

import (
	"errors"
	"strings"
	"testing"
)

// TestFeatureZNodeEncodeAsKafka: the bytes are Kafka's, key order
// included ("features", "version", "status"), for the node a 3.9
// controller creates and for v1/v2 nodes with features.
func TestFeatureZNodeEncodeAsKafka(t *testing.T) {
	for _, tc := range []struct {
		node FeatureZNode
		want string
	}{
		{FeatureZNode{Version: 2, Status: FeatureEnabled, Features: map[string]int16{}}, `{"features":{},"version":2,"status":1}`},
		{FeatureZNode{Version: 2, Status: FeatureDisabled}, `{"features":{},"version":2,"status":0}`},
		{FeatureZNode{Version: 2, Status: FeatureEnabled, Features: map[string]int16{"f": 3}}, `{"features":{"f":{"max_version_level":3}},"version":2,"status":1}`},
		{FeatureZNode{Version: 1, Status: FeatureEnabled, Features: map[string]int16{"f": 3}}, `{"features":{"f":{"max_version_level":3,"min_version_level":3}},"version":1,"status":1}`},
	} {
		if got := string(tc.node.Encode()); got != tc.want {
			t.Errorf("%+v encodes %s, want %s", tc.node, got, tc.want)
		}
		back, err := DecodeFeatureZNode([]byte(tc.want))
		if err != nil || !back.Equal(FeatureZNode{Version: tc.node.Version, Status: tc.node.Status, Features: orEmpty(tc.node.Features)}) {
			t.Errorf("%s decodes to %+v, %v", tc.want, back, err)
		}
	}
}

func orEmpty(m map[string]int16) map[string]int16 {
	if m == nil {
		return map[string]int16{}
	}
	return m
}

// TestDecodeFeatureZNodeRefusesWhatKafkaRefuses: every check of Kafka's
// FeatureZNode.decode, with its reason.
func TestDecodeFeatureZNodeRefusesWhatKafkaRefuses(t *testing.T) {
	for _, tc := range []struct{ data, reason string }{
		{`not json`, "Failed to parse feature information"},
		{`{"features":{},"status":1}`, "no version"},
		{`{"features":{},"version":3,"status":1}`, "Unsupported version: 3"},
		{`{"features":{},"version":0,"status":1}`, "Unsupported version: 0"},
		{`{"features":{},"version":2}`, "Status can not be absent"},
		{`{"features":{},"version":2,"status":2}`, "Malformed status: 2"},
		{`{"version":2,"status":1}`, "Features map can not be absent"},
		{`{"features":{"f":{}},"version":2,"status":1}`, "max_version_level absent"},
		{`{"features":{"f":{"max_version_level":0}},"version":2,"status":1}`, "Expected maxValue >= 1"},
		{`{"features":{"f":{"max_version_level":2}},"version":1,"status":1}`, "min_version_level absent"},
		{`{"features":{"f":{"max_version_level":2,"min_version_level":3}},"version":1,"status":1}`, "maxValue >= minValue"},
		{`{"features":{"f":{"max_version_level":2,"min_version_level":0}},"version":1,"status":1}`, "Expected minValue >= 1"},
	} {
		_, err := DecodeFeatureZNode([]byte(tc.data))
		if !errors.Is(err, ErrBadData) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: %v, want ErrBadData with %q", tc.data, err, tc.reason)
		}
	}
	// A v2 node ignores a min_version_level (Kafka reads max alone).
	n, err := DecodeFeatureZNode([]byte(`{"features":{"f":{"max_version_level":2,"min_version_level":1}},"version":2,"status":1}`))
	if err != nil || n.Features["f"] != 2 {
		t.Fatalf("v2 with min: %+v %v", n, err)
	}
}
