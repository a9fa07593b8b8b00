package controller

import (
	"errors"
	"time"

	"go.uber.org/zap"

	"gregor/replication/metadata"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// Feature versioning (KIP-584) as a Kafka 3.9 broker in ZooKeeper mode,
// where inter.broker.protocol.version is always 3.9 (>= 2.7):
//
//   - A newly elected controller enables /feature before anything else
//     (KafkaController.enableFeatureVersioning): absent, it creates
//     {"features":{},"version":2,"status":1} (the broker supports no
//     feature, so its default finalized features are none); present, it
//     rewrites it as version 2, enabled, with the features it held when
//     enabled and none when disabled, unless it is that already.
//   - Every broker watches /feature (FinalizedFeatureChangeListener) and
//     keeps what it reads in its FeatureCache (ZkMetadataCache): an
//     enabled node's features with its data version as the epoch; an
//     absent, disabled or unreadable node clears it (epoch -1). Kafka's
//     listener does this on a thread of its own; here it is the
//     controller's event loop on every broker, the /config/changes way,
//     so it is re-armed on a new session with the other watches.
//   - Kafka's controller then waits for its own listener to reach the new
//     epoch; here the controller installs what it wrote into the cache
//     itself, so nothing waits.

// evFeature: /feature created, changed or deleted (every broker).
const evFeature eventKind = 201

// watchFeatureLocked arms the /feature watch unless it is armed, reading
// the node; on failure it retries in a second.
func (c *Controller) watchFeatureLocked() {
	if c.isArmed(zkmeta.FeaturePath) {
		return
	}
	if err := c.onFeatureChange(); err != nil {
		c.log.Warn("watching /feature failed, retrying", zap.Error(err))
		c.after(time.Second, event{kind: evFeature})
	}
}

// onFeatureChange re-reads /feature (re-arming its watch) into the
// feature cache (FeatureCacheUpdater.updateLatestOrThrow).
func (c *Controller) onFeatureChange() error {
	if c.isArmed(zkmeta.FeaturePath) {
		return nil // a retry after the watch was armed by another read
	}
	exists, w, err := c.meta.ExistsW(zkmeta.FeaturePath)
	if err != nil {
		return err
	}
	c.forward(evFeature, zkmeta.FeaturePath, w)
	if !exists {
		c.log.Info("feature ZK node does not exist", zap.String("path", zkmeta.FeaturePath))
		c.features.Clear()
		return nil
	}
	data, version, err := c.meta.Get(zkmeta.FeaturePath)
	if errors.Is(err, metastore.ErrNoNode) {
		c.features.Clear() // deleted since: the watch fires and says so
		return nil
	}
	if err != nil {
		return err
	}
	c.applyFeatureZNode(data, version)
	return nil
}

// applyFeatureZNode puts /feature's data of version into the cache.
func (c *Controller) applyFeatureZNode(data []byte, version int32) {
	node, err := zkmeta.DecodeFeatureZNode(data)
	switch {
	case err != nil:
		c.log.Error("unable to deserialize feature ZK node", zap.String("path", zkmeta.FeaturePath), zap.Error(err))
		c.features.Clear()
	case node.Status == zkmeta.FeatureDisabled:
		c.log.Info("feature ZK node is in disabled status", zap.String("path", zkmeta.FeaturePath))
		c.features.Clear()
	default:
		if err := c.features.Update(node.Features, int64(version)); err != nil {
			// Kafka's broker exits here; Gregor keeps the last compatible
			// features (see metadata.FeatureCache.Update).
			c.log.Error("failed to process feature ZK node change event", zap.Error(err))
		}
	}
}

// enableFeatureVersioning is the first step of a controller failover
// (see the file comment). An unreadable /feature fails the failover, as
// Kafka's decode exception does.
func (c *Controller) enableFeatureVersioning() error {
	data, version, err := c.meta.Get(zkmeta.FeaturePath)
	if errors.Is(err, metastore.ErrNoNode) {
		node := zkmeta.FeatureZNode{Version: zkmeta.FeatureZNodeV2, Status: zkmeta.FeatureEnabled, Features: defaultFinalizedFeatures()}
		c.log.Info("creating FeatureZNode", zap.String("path", zkmeta.FeaturePath), zap.ByteString("contents", node.Encode()))
		if err := c.meta.Create(zkmeta.FeaturePath, node.Encode(), false); err != nil {
			return err // NodeExists too: another writer raced us; the failover is retried
		}
		c.installFeatures(node, 0)
		return nil
	}
	if err != nil {
		return err
	}
	existing, err := zkmeta.DecodeFeatureZNode(data)
	if err != nil {
		return err
	}
	features := existing.Features
	if existing.Status == zkmeta.FeatureDisabled {
		if len(features) > 0 {
			c.log.Warn("FeatureZNode with disabled status contains non-empty features", zap.String("path", zkmeta.FeaturePath), zap.Any("features", features))
		}
		features = map[string]int16{}
	}
	node := zkmeta.FeatureZNode{Version: zkmeta.FeatureZNodeV2, Status: zkmeta.FeatureEnabled, Features: features}
	if node.Equal(existing) {
		c.installFeatures(node, version)
		return nil
	}
	c.log.Info("updating FeatureZNode", zap.String("path", zkmeta.FeaturePath), zap.ByteString("contents", node.Encode()))
	nv, err := c.meta.Set(zkmeta.FeaturePath, node.Encode(), version)
	if err != nil {
		return err // BadVersion: changed meanwhile; the failover is retried
	}
	c.installFeatures(node, nv)
	return nil
}

// installFeatures puts what the controller found or wrote into this
// broker's cache at once (Kafka waits for its listener instead).
func (c *Controller) installFeatures(node zkmeta.FeatureZNode, version int32) {
	if err := c.features.Update(node.Features, int64(version)); err != nil {
		c.log.Error("finalized features not applied", zap.Error(err))
	}
}

// defaultFinalizedFeatures are the features a new cluster starts with
// (BrokerFeatures.defaultFinalizedFeatures: every supported feature at
// its highest level): none, since the broker supports none.
func defaultFinalizedFeatures() map[string]int16 {
	out := map[string]int16{}
	for name, r := range metadata.SupportedFeatures {
		out[name] = r[1]
	}
	return out
}

// Features is this broker's finalized feature cache (Options.Features).
func (c *Controller) Features() *metadata.FeatureCache { return c.features }
