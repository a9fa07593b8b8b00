package zkmeta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
)

// FeaturePath is /feature, the cluster's finalized features (KIP-584,
// Kafka's FeatureZNode). The active controller creates it (status
// enabled) when it is elected; every broker watches it.
const FeaturePath = "/feature"

// FeatureZNode versions ("version"): v1 carries min_version_level and
// max_version_level per feature, v2 (inter.broker.protocol.version 3.3
// and later, so what Gregor writes) max_version_level alone.
const (
	FeatureZNodeV1 = 1
	FeatureZNodeV2 = 2
)

// FeatureStatus is /feature's "status" (Kafka's FeatureZNodeStatus):
// whether the finalized features it holds are in force.
type FeatureStatus int

// Feature statuses.
const (
	// FeatureDisabled (0): feature versioning is off (an
	// inter.broker.protocol.version below 2.7); the features are ignored.
	FeatureDisabled FeatureStatus = 0
	// FeatureEnabled (1): the finalized features are in force.
	FeatureEnabled FeatureStatus = 1
)

// FeatureZNode is /feature's data: the node format version, the status
// and the finalized features (name → max version level, >= 1).
type FeatureZNode struct {
	Version  int
	Status   FeatureStatus
	Features map[string]int16
}

// Equal reports whether two nodes encode the same (Kafka compares them
// before rewriting the node).
func (n FeatureZNode) Equal(o FeatureZNode) bool {
	return n.Version == o.Version && n.Status == o.Status && maps.Equal(n.Features, o.Features)
}

// featureJSON is the znode's JSON in Kafka's key order: Kafka encodes a
// hash map whose iteration order puts "features" first, then "version",
// then "status" ({"features":{},"version":2,"status":1}).
type featureJSON struct {
	Features map[string]map[string]int16 `json:"features"`
	Version  int                         `json:"version"`
	Status   int                         `json:"status"`
}

// Encode renders the znode data as Kafka's FeatureZNode.encode does: each
// feature as {"max_version_level":n}, plus "min_version_level":n (the
// same level) in a v1 node.
func (n FeatureZNode) Encode() []byte {
	j := featureJSON{Features: map[string]map[string]int16{}, Version: n.Version, Status: int(n.Status)}
	for name, level := range n.Features {
		if n.Version == FeatureZNodeV1 {
			j.Features[name] = map[string]int16{"max_version_level": level, "min_version_level": level}
		} else {
			j.Features[name] = map[string]int16{"max_version_level": level}
		}
	}
	raw, _ := json.Marshal(j)
	return raw
}

// DecodeFeatureZNode parses /feature's data with Kafka's
// FeatureZNode.decode checks: "version" 1 or 2, a "status" of 0 or 1, a
// "features" map whose entries carry max_version_level >= 1 (and in v1
// min_version_level, 1 <= min <= max). Errors wrap ErrBadData with
// Kafka's reason.
func DecodeFeatureZNode(data []byte) (FeatureZNode, error) {
	var raw struct {
		Version  *json.Number                       `json:"version"`
		Status   *json.Number                       `json:"status"`
		Features *map[string]map[string]json.Number `json:"features"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("Failed to parse feature information: %s: %v", data, err))
	}
	if raw.Version == nil {
		return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("no version in feature information: %s", data))
	}
	version, err := raw.Version.Int64()
	if err != nil || version < FeatureZNodeV1 || version > FeatureZNodeV2 {
		return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("Unsupported version: %s of feature information: %s", raw.Version, data))
	}
	if raw.Status == nil {
		return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("Status can not be absent in feature information: %s", data))
	}
	status, err := raw.Status.Int64()
	if err != nil || (status != int64(FeatureDisabled) && status != int64(FeatureEnabled)) {
		return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("Malformed status: %s found in feature information: %s", raw.Status, data))
	}
	if raw.Features == nil {
		return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("Features map can not be absent in: %s", data))
	}
	n := FeatureZNode{Version: int(version), Status: FeatureStatus(status), Features: map[string]int16{}}
	for name, levels := range *raw.Features {
		maxRaw, ok := levels["max_version_level"]
		if !ok {
			return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("max_version_level absent in [%v] of %q", levels, name))
		}
		maxLevel, err := maxRaw.Int64()
		if err != nil {
			return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("max_version_level %s of %q is not an integer", maxRaw, name))
		}
		if version == FeatureZNodeV1 {
			minRaw, ok := levels["min_version_level"]
			if !ok {
				return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("min_version_level absent in [%v] of %q", levels, name))
			}
			minLevel, err := minRaw.Int64()
			if err != nil || minLevel < 1 || maxLevel < minLevel {
				return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("Expected minValue >= 1, maxValue >= 1 and maxValue >= minValue, but received minValue: %s, maxValue: %d", minRaw, maxLevel))
			}
		}
		if maxLevel < 1 || maxLevel > 1<<15-1 {
			return FeatureZNode{}, badData(FeaturePath, fmt.Errorf("Expected maxValue >= 1, but received maxValue: %d", maxLevel))
		}
		n.Features[name] = int16(maxLevel)
	}
	return n, nil
}
