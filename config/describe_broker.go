package config

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeBrokerConfigs returns the broker's configs as Kafka's
// DescribeConfigs answers for this broker's id, sorted by name: every key of
// the broker key table (brokerKeys) and every other key server.properties
// sets (ignored and unknown keys, with their value as written).
//
//   - Value: the value as written when server.properties sets the key,
//     else its default (Defaults(); null for the keys whose Kafka default is
//     null, such as log.retention.ms and advertised.listeners).
//   - Synonyms, as Kafka's configSynonyms: over the key's synonym group
//     (brokerSynonyms: log.retention.ms/minutes/hours, log.roll.ms/hours;
//     else the key alone), in precedence order, first the keys the file sets
//     (STATIC_BROKER_CONFIG), then the keys with a default (DEFAULT_CONFIG);
//     entries before the key's own first one are dropped.
//   - Source: the first synonym's, DEFAULT_CONFIG when there is none. So
//     with log.retention.hours=24 in the file, log.retention.hours is
//     STATIC_BROKER_CONFIG with synonyms [log.retention.hours=24 STATIC,
//     log.retention.hours=168 DEFAULT] and log.retention.ms is
//     DEFAULT_CONFIG, null, without synonyms.
//
// Entries are read-only unless the key is dynamic (IsDynamicBrokerConfig);
// keys naming a password or secret are sensitive. This is
// DescribeBrokerConfigsWith without dynamic configs.
func (b *Broker) DescribeBrokerConfigs() []ConfigEntry {
	return b.DescribeBrokerConfigsWith(DynamicLayers{})
}

// DescribeBrokerConfigsWith is DescribeBrokerConfigs over b's static
// config (b.Raw) with the dynamic layers on top: a key a dynamic layer
// sets is listed with the effective value (per-broker over default over
// static), source DYNAMIC_BROKER_CONFIG or DYNAMIC_DEFAULT_BROKER_CONFIG,
// and synonyms in Kafka's order (per-broker dynamic, default dynamic,
// static, default; DynamicBrokerConfig's configSynonyms).
func (b *Broker) DescribeBrokerConfigsWith(dyn DynamicLayers) []ConfigEntry {
	d := Defaults()
	eff := Overlay(b.Raw, dyn.Defaults, dyn.PerBroker)
	names := make([]string, 0, len(brokerKeys)+len(eff))
	for k := range brokerKeys {
		names = append(names, k)
	}
	for k := range eff {
		if _, ok := brokerKeys[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := make([]ConfigEntry, 0, len(names))
	for _, name := range names {
		bk, known := brokerKeys[name]
		e := ConfigEntry{Name: name, Source: kmsg.ConfigSourceDefaultConfig, ReadOnly: !dynamicKeys[name], Sensitive: sensitiveKey(name)}
		if known {
			e.Type = bk.typ
		}
		switch v, set := eff[name]; {
		case set:
			e.Value = v
		case known && bk.def != nil:
			e.Value = bk.def(d)
		default:
			e.Null = true
		}
		e.Synonyms = brokerSynonymList(name, b.Raw, dyn)
		if len(e.Synonyms) > 0 {
			e.Source = e.Synonyms[0].Source
		}
		out = append(out, e)
	}
	return out
}
