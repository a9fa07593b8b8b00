package config

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Dynamic broker configs (KIP-226): /config/brokers/<id> and
// /config/brokers/<default> override server.properties at run time. The
// precedence is Kafka's DynamicBrokerConfig one: per-broker dynamic >
// default dynamic > static (server.properties) > default. This file holds
// the pure part: which keys may change at run time, the validation of an
// update, and the overlay; config/dynamic applies it (store, watcher,
// the registry of components).

// DefaultEntity is the entity name of the cluster-wide dynamic defaults
// (/config/brokers/<default>, Kafka's ZooKeeperInternals.DEFAULT_STRING).
const DefaultEntity = "<default>"

// dynamicKeys are the broker keys Kafka marks as dynamically updatable
// (DynamicBrokerConfig.AllDynamicConfigs and the broker quota configs)
// that Gregor applies at run time. The topic defaults are Kafka's
// DynamicLogConfig.ReconfigurableConfigs: the first synonym of each topic
// config only, so log.retention.ms is dynamic and log.retention.hours is not.
var dynamicKeys = map[string]bool{
	// Topic defaults (applied to every hosted topic without its own override).
	"log.segment.bytes": true, "log.roll.ms": true, "log.index.size.max.bytes": true,
	"log.flush.interval.messages": true, "log.flush.interval.ms": true,
	"log.retention.bytes": true, "log.retention.ms": true, "message.max.bytes": true,
	"log.index.interval.bytes": true, "log.cleaner.delete.retention.ms": true,
	"log.cleaner.min.compaction.lag.ms": true, "log.cleaner.max.compaction.lag.ms": true,
	"log.segment.delete.delay.ms": true, "log.cleaner.min.cleanable.ratio": true,
	"log.cleanup.policy": true, "unclean.leader.election.enable": true,
	"min.insync.replicas": true, "compression.type": true,
	"log.message.timestamp.type": true, "log.message.timestamp.difference.max.ms": true,
	// Connection quotas (SocketServer.ReconfigurableConfigs, KIP-612).
	"max.connections": true, "max.connections.per.ip": true,
	"max.connections.per.ip.overrides": true, "max.connection.creation.rate": true,
	// Replica fetchers (DynamicThreadPool; fetcher.Manager.Resize).
	"num.replica.fetchers": true,
	// Log cleaner (LogCleaner.ReconfigurableConfigs that Gregor has).
	"log.cleaner.backoff.ms": true, "log.cleaner.dedupe.buffer.size": true, "log.cleaner.io.buffer.load.factor": true,
	// Replication throttles (QuotaConfigs.brokerQuotaConfigs).
	"leader.replication.throttled.rate": true, "follower.replication.throttled.rate": true,
	"replica.alter.log.dirs.io.max.bytes.per.second": true,
}

// TopicDefaultKeys are the dynamic keys that are topic config defaults
// (Kafka's DynamicLogConfig.ReconfigurableConfigs that Gregor has): a
// change reaches every topic without its own override.
var TopicDefaultKeys = []string{
	"log.segment.bytes", "log.roll.ms", "log.index.size.max.bytes", "log.flush.interval.messages",
	"log.flush.interval.ms", "log.retention.bytes", "log.retention.ms", "message.max.bytes",
	"log.index.interval.bytes", "log.cleaner.delete.retention.ms", "log.cleaner.min.compaction.lag.ms",
	"log.cleaner.max.compaction.lag.ms", "log.segment.delete.delay.ms", "log.cleaner.min.cleanable.ratio",
	"log.cleanup.policy", "unclean.leader.election.enable", "min.insync.replicas", "compression.type",
	"log.message.timestamp.type", "log.message.timestamp.difference.max.ms",
}

// CleanerKeys are the dynamic log cleaner keys (Kafka's
// LogCleaner.ReconfigurableConfigs that Gregor applies).
var CleanerKeys = []string{"log.cleaner.backoff.ms", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.load.factor"}

// ConnectionLimitKeys are the dynamic connection quota keys (KIP-612).
var ConnectionLimitKeys = []string{"max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides", "max.connection.creation.rate"}

// ValidateThreadCount is Kafka's DynamicThreadPool.validateReconfiguration
// for one thread-count key (num.replica.fetchers): a changed value must
// be at least 1, at least half the current one and at most double it.
// Errors: *DynamicError with Kafka's message.
func ValidateThreadCount(key string, cur, next int) error {
	if next == cur {
		return nil
	}
	msg := fmt.Sprintf("Dynamic thread count update validation failed for %s=%d", key, next)
	switch {
	case next <= 0:
		return &DynamicError{msg + ", value should be at least 1"}
	case next < cur/2:
		return &DynamicError{fmt.Sprintf("%s, value should be at least half the current value %d", msg, cur)}
	case next > cur*2:
		return &DynamicError{fmt.Sprintf("%s, value should not be greater than double the current value %d", msg, cur)}
	}
	return nil
}

// ReplicationQuotaKeys are the dynamic replication throttle keys (the
// replication quota managers register for them).
var ReplicationQuotaKeys = []string{"leader.replication.throttled.rate", "follower.replication.throttled.rate", "replica.alter.log.dirs.io.max.bytes.per.second"}

// notAppliedDynamic are keys Kafka updates at run time that Gregor reads
// only at start (or not at all): refused with their own message rather
// than accepted and ignored.
var notAppliedDynamic = map[string]bool{
	"num.io.threads": true, "num.recovery.threads.per.data.dir": true,
	"background.threads": true, "num.network.threads": true, "log.cleaner.threads": true,
	"log.cleaner.io.buffer.size": true, "log.cleaner.io.max.bytes.per.second": true,
	"log.preallocate": true, "log.message.downconversion.enable": true,
	"producer.id.expiration.ms": true, "transaction.partition.verification.enable": true,
	"metric.reporters": true, "listeners": true, "advertised.listeners": true,
	"listener.security.protocol.map": true, "principal.builder.class": true,
	"sasl.enabled.mechanisms": true, "sasl.jaas.config": true, "ssl.client.auth": true,
}

// IsDynamicBrokerConfig reports whether name is a broker key Gregor
// changes at run time (DescribeConfigs shows it read_only=false).
func IsDynamicBrokerConfig(name string) bool { return dynamicKeys[name] || IsDynamicKeystoreKey(name) }

// DynamicBrokerConfigs are the dynamic broker keys, sorted.
func DynamicBrokerConfigs() []string {
	out := make([]string, 0, len(dynamicKeys))
	for k := range dynamicKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// knownBrokerKey reports whether server.properties accepts name without a
// warning (a Kafka broker key Gregor knows).
func knownBrokerKey(name string) bool {
	_, ok := brokerKeys[name]
	_, ignored := ignoredKeys[name]
	return ok || ignored || isListenerSSLKey(name) || isSASLListenerKey(name)
}

// DynamicError is a refused dynamic broker config update: Kafka answers
// it INVALID_CONFIG (a ConfigException) with Message.
type DynamicError struct{ Message string }

func (e *DynamicError) Error() string { return e.Message }

// scalaSet renders names as Kafka's messages print a Scala Set, sorted.
func scalaSet(names []string) string {
	sort.Strings(names)
	return "Set(" + strings.Join(names, ", ") + ")"
}

// ValidateDynamic checks one entity's dynamic configs (its whole new
// content: props) as Kafka's DynamicBrokerConfig.validateConfigs and
// validateConfigTypes do, before anything is written. perBroker: the entity
// is a broker id (else <default>). Errors, each a *DynamicError or a
// *ValueError (INVALID_CONFIG):
//   - a key Kafka does not update at run time: "Cannot update these configs
//     dynamically: Set(broker.id, …)";
//   - a key Kafka updates but Gregor reads only at start, or a listener
//     (listener.name.<l>.…) key: "Gregor does not apply these configs at
//     run time; change server.properties and restart: Set(…)";
//   - a key that is not a broker config ("Unknown broker configs: Set(…)";
//     Kafka stores custom keys for plugins, Gregor has none to read them);
//   - a value its key refuses (*ValueError, Kafka's validator message).
func ValidateDynamic(props map[string]string, perBroker bool) error {
	var nonDynamic, notApplied, unknown, perBrokerOnly []string
	for k := range props {
		switch {
		case dynamicKeys[k]:
		case IsDynamicKeystoreKey(k):
			if !perBroker {
				perBrokerOnly = append(perBrokerOnly, k)
			}
		case notAppliedDynamic[k] || strings.HasPrefix(k, "listener.name."):
			notApplied = append(notApplied, k)
		case knownBrokerKey(k):
			nonDynamic = append(nonDynamic, k)
		default:
			unknown = append(unknown, k)
		}
	}
	if len(nonDynamic) > 0 {
		return &DynamicError{"Cannot update these configs dynamically: " + scalaSet(nonDynamic)}
	}
	if len(perBrokerOnly) > 0 {
		return &DynamicError{"Cannot update these configs at default cluster level, broker id must be specified: " + scalaSet(perBrokerOnly)}
	}
	if len(notApplied) > 0 {
		return &DynamicError{"Gregor does not apply these configs at run time; change server.properties and restart: " + scalaSet(notApplied)}
	}
	if len(unknown) > 0 {
		return &DynamicError{"Unknown broker configs: " + scalaSet(unknown)}
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	scratch := Defaults()
	for _, k := range keys {
		if IsDynamicKeystoreKey(k) {
			continue // checked by loading the keystore (the listener TLS component)
		}
		if err := brokerKeys[k].set(scratch, k, strings.TrimSpace(props[k])); err != nil {
			return err
		}
	}
	return nil
}

// keystoreSuffixes are the listener keystore keys a broker reloads at run
// time (Kafka's SslConfigs.RECONFIGURABLE_CONFIGS that Gregor has, per
// broker only, as Kafka's DynamicBrokerConfig.PerBrokerConfigs).
var keystoreSuffixes = []string{"ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type", "ssl.key.password",
	"ssl.keystore.key", "ssl.keystore.certificate.chain"}

// IsDynamicKeystoreKey reports whether k is
// listener.name.<l>.ssl.keystore.{location,password,type,key,certificate.chain}
// or listener.name.<l>.ssl.key.password: a listener's keystore, which a
// per-broker dynamic config replaces for new connections.
func IsDynamicKeystoreKey(k string) bool {
	m := listenerPrefixRE.FindStringSubmatch(k)
	if m == nil {
		return false
	}
	for _, suf := range keystoreSuffixes {
		if m[2] == suf {
			return true
		}
	}
	return false
}

// KeystoreKeys are the dynamic keystore keys of a listener.
func KeystoreKeys(listener string) []string {
	out := make([]string, len(keystoreSuffixes))
	for i, suf := range keystoreSuffixes {
		out[i] = "listener.name." + strings.ToLower(listener) + "." + suf
	}
	return out
}

// Overlay is the effective key/value map of a broker: static
// (server.properties as read) overlaid by the dynamic defaults, then by
// the per-broker dynamic configs (Kafka's precedence). The inputs are not
// modified.
func Overlay(static, defaults, perBroker map[string]string) map[string]string {
	out := maps.Clone(static)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, defaults)
	maps.Copy(out, perBroker)
	return out
}

// DynamicLayers are the two dynamic layers over a broker's static config,
// for DescribeConfigs sources.
type DynamicLayers struct {
	PerBroker map[string]string // /config/brokers/<id>: DYNAMIC_BROKER_CONFIG
	Defaults  map[string]string // /config/brokers/<default>: DYNAMIC_DEFAULT_BROKER_CONFIG
}

// synonymsOf is Kafka's brokerConfigSynonyms for the groups Gregor has.
func synonymsOf(name string) []string {
	if g := brokerSynonyms[name]; g != nil {
		return g
	}
	return []string{name}
}

func sensitiveKey(name string) bool {
	return strings.Contains(name, "password") || strings.Contains(name, "secret") || strings.HasSuffix(name, "sasl.jaas.config")
}

// brokerSynonymList is Kafka's configSynonyms: for each layer in precedence
// order (per-broker dynamic, default dynamic, static, default), the group's
// keys that layer sets; entries before name's own first one are dropped.
func brokerSynonymList(name string, static map[string]string, dyn DynamicLayers) []ConfigSynonym {
	d := Defaults()
	group := synonymsOf(name)
	var syn []ConfigSynonym
	add := func(m map[string]string, src kmsg.ConfigSource) {
		for _, k := range group {
			if v, ok := m[k]; ok {
				syn = append(syn, ConfigSynonym{Name: k, Value: v, Source: src})
			}
		}
	}
	add(dyn.PerBroker, kmsg.ConfigSourceDynamicBrokerConfig)
	add(dyn.Defaults, kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	add(static, kmsg.ConfigSourceStaticBrokerConfig)
	for _, k := range group {
		if sk, ok := brokerKeys[k]; ok && sk.def != nil {
			syn = append(syn, ConfigSynonym{Name: k, Value: sk.def(d), Source: kmsg.ConfigSourceDefaultConfig})
		}
	}
	for len(syn) > 0 && syn[0].Name != name {
		syn = syn[1:]
	}
	return syn
}

// DescribeDynamicDefaults is DescribeConfigs of the BROKER resource ""
// (--entity-default): only the keys /config/brokers/<default> sets, each
// DYNAMIC_DEFAULT_BROKER_CONFIG with its synonyms from the default layer
// down (Kafka drops the per-broker layer here), sorted by name. static is
// the describing broker's server.properties.
func DescribeDynamicDefaults(static map[string]string, defaults map[string]string) []ConfigEntry {
	names := make([]string, 0, len(defaults))
	for k := range defaults {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]ConfigEntry, 0, len(names))
	for _, name := range names {
		e := ConfigEntry{Name: name, Value: defaults[name], Source: kmsg.ConfigSourceDynamicDefaultBrokerConfig,
			ReadOnly: !dynamicKeys[name], Sensitive: sensitiveKey(name)}
		if bk, ok := brokerKeys[name]; ok {
			e.Type = bk.typ
		}
		e.Synonyms = brokerSynonymList(name, static, DynamicLayers{Defaults: defaults})
		out = append(out, e)
	}
	return out
}
