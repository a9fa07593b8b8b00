package config

import (
	"sort"
	"strings"

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
// Every entry is read-only (Gregor has no dynamic broker configs); keys
// naming a password or secret are sensitive.
func (b *Broker) DescribeBrokerConfigs() []ConfigEntry {
	d := Defaults()
	names := make([]string, 0, len(brokerKeys)+len(b.Raw))
	for k := range brokerKeys {
		names = append(names, k)
	}
	for k := range b.Raw {
		if _, ok := brokerKeys[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := make([]ConfigEntry, 0, len(names))
	for _, name := range names {
		bk, known := brokerKeys[name]
		e := ConfigEntry{Name: name, Source: kmsg.ConfigSourceDefaultConfig, ReadOnly: true,
			Sensitive: strings.Contains(name, "password") || strings.Contains(name, "secret") || strings.HasSuffix(name, "sasl.jaas.config")}
		if known {
			e.Type = bk.typ
		}
		switch v, set := b.Raw[name]; {
		case set:
			e.Value = v
		case known && bk.def != nil:
			e.Value = bk.def(d)
		default:
			e.Null = true
		}
		group := brokerSynonyms[name]
		if group == nil {
			group = []string{name}
		}
		var syn []ConfigSynonym
		for _, k := range group {
			if v, ok := b.Raw[k]; ok {
				syn = append(syn, ConfigSynonym{Name: k, Value: v, Source: kmsg.ConfigSourceStaticBrokerConfig})
			}
		}
		for _, k := range group {
			if sk, ok := brokerKeys[k]; ok && sk.def != nil {
				syn = append(syn, ConfigSynonym{Name: k, Value: sk.def(d), Source: kmsg.ConfigSourceDefaultConfig})
			}
		}
		for len(syn) > 0 && syn[0].Name != name {
			syn = syn[1:]
		}
		if len(syn) > 0 {
			e.Source = syn[0].Source
		}
		e.Synonyms = syn
		out = append(out, e)
	}
	return out
}
