package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
)

// Finalized is the cluster's finalized features as this broker knows
// them (Kafka's FinalizedFeatures in ZkMetadataCache): feature name →
// version level, and Epoch, the data version of /feature it was read
// from. Epoch -1 (UnknownFeaturesEpoch) and no features: /feature is
// absent, disabled or unreadable. Never modify a loaded value.
type Finalized struct {
	Features map[string]int16
	Epoch    int64
}

// UnknownFeaturesEpoch is ApiVersions' FinalizedFeaturesEpoch when no
// finalized features are known (Kafka's
// ApiVersionsResponse.UNKNOWN_FINALIZED_FEATURES_EPOCH).
const UnknownFeaturesEpoch int64 = -1

// MetadataVersionFeature is the KRaft metadata.version feature, which a
// ZooKeeper-mode broker never counts among its finalized features
// (Kafka's FinalizedFeatures drops it when not in KRaft mode).
const MetadataVersionFeature = "metadata.version"

// SupportedFeatures is what this broker supports (ApiVersions'
// SupportedFeatures, name → [min, max] level): none, as a Kafka 3.9
// broker in ZooKeeper mode (KafkaServer's BrokerFeatures.createEmpty).
var SupportedFeatures = map[string][2]int16{}

// noFeatures is what Load returns before any Update, and after Clear.
var noFeatures = &Finalized{Features: map[string]int16{}, Epoch: UnknownFeaturesEpoch}

// FeatureCache holds the finalized features read from /feature, for
// ApiVersions (Kafka's ZkMetadataCache features, kept current by the
// FinalizedFeatureChangeListener; here the controller's /feature watch
// on every broker). The zero value holds none. Safe for concurrent use;
// Load never blocks.
type FeatureCache struct {
	cur atomic.Pointer[Finalized]
}

// Load returns the features in force (never nil).
func (c *FeatureCache) Load() *Finalized {
	if c == nil {
		return noFeatures
	}
	if f := c.cur.Load(); f != nil {
		return f
	}
	return noFeatures
}

// Update installs features read from an enabled /feature of data version
// epoch, as ZkMetadataCache.updateFeaturesOrThrow: metadata.version is
// dropped first; an epoch older than the one held, or a feature this
// broker does not support (SupportedFeatures is empty, so any feature at
// all) or at a level outside its range, is refused with Kafka's reason
// and the cache keeps what it had. (Kafka's broker then exits; Gregor
// keeps serving with the last compatible features and the caller logs
// the error.)
func (c *FeatureCache) Update(features map[string]int16, epoch int64) error {
	latest := &Finalized{Features: maps.Clone(features), Epoch: epoch}
	if latest.Features == nil {
		latest.Features = map[string]int16{}
	}
	delete(latest.Features, MetadataVersionFeature)
	for {
		old := c.cur.Load()
		if old != nil && old.Epoch > epoch {
			return fmt.Errorf("FinalizedFeatureCache update failed due to invalid epoch in new %s. The existing cache contents are %s.", latest, old)
		}
		if bad := incompatible(latest.Features); len(bad) > 0 {
			return fmt.Errorf("FinalizedFeatureCache update failed since feature compatibility checks failed! Supported %s has incompatibilities with the latest %s: %s", supportedString(), latest, strings.Join(bad, ", "))
		}
		if c.cur.CompareAndSwap(old, latest) { // else a concurrent Update won: check against it
			return nil
		}
	}
}

// Clear forgets the finalized features (/feature absent, disabled or
// unreadable): Load answers none with epoch -1 (Kafka's clearFeatures).
func (c *FeatureCache) Clear() { c.cur.Store(nil) }

// incompatible lists, as Kafka's BrokerFeatures.incompatibleFeatures
// logs them, the finalized features this broker does not support.
func incompatible(finalized map[string]int16) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(finalized)) {
		level := finalized[name]
		r, ok := SupportedFeatures[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("{feature=%s, reason='Unsupported feature'}", name))
		case level < r[0] || level > r[1]:
			out = append(out, fmt.Sprintf("{feature=%s, reason='%d is incompatible with {min_version:%d, max_version:%d}'}", name, level, r[0], r[1]))
		}
	}
	return out
}

// String renders f as Kafka's FinalizedFeatures.toString (less the
// metadata version, which a ZooKeeper-mode broker does not hold).
func (f *Finalized) String() string {
	return fmt.Sprintf("Features(finalizedFeatures=%s, finalizedFeaturesEpoch=%d)", levelsString(f.Features), f.Epoch)
}

func levelsString(m map[string]int16) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func supportedString() string {
	parts := make([]string, 0, len(SupportedFeatures))
	for _, k := range slices.Sorted(maps.Keys(SupportedFeatures)) {
		r := SupportedFeatures[k]
		parts = append(parts, fmt.Sprintf("(%s -> {min_version:%d, max_version:%d})", k, r[0], r[1]))
	}
	return "Features{" + strings.Join(parts, ", ") + "}"
}
