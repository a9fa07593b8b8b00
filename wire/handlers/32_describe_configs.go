package handlers

// DescribeConfigs: v0-4
//
// Behaviour:
//   - TOPIC: every topic config (config.DescribeTopicConfigs; type and
//     documentation from replication/topicconfig) with its effective
//     value and source: TOPIC_CONFIG (/config/topics/<t>),
//     DYNAMIC_BROKER_CONFIG / DYNAMIC_DEFAULT_BROKER_CONFIG (the broker
//     key set in /config/brokers/<id> or <default>), STATIC_BROKER_CONFIG
//     (server.properties synonym) or DEFAULT_CONFIG, synonyms in that order
//     (config.DescribeTopicConfigsWith).
//     ConfigNames filters (null = all). Unknown topic:
//     UNKNOWN_TOPIC_OR_PARTITION. Nothing is read-only or sensitive.
//     Any broker answers, controller or not: the overrides are read from
//     ZooKeeper (controller.ReadTopicConfig), as in Kafka's ZooKeeper mode.
//   - BROKER, this broker's id: every broker config Gregor knows (the
//     config package's key table) plus any other key server.properties
//     or a dynamic layer sets, sorted by name
//     (config.DescribeBrokerConfigsWith): a key /config/brokers/<id> sets
//     is DYNAMIC_BROKER_CONFIG, one /config/brokers/<default> sets
//     DYNAMIC_DEFAULT_BROKER_CONFIG, one the file sets
//     STATIC_BROKER_CONFIG with its value as written; one left out is
//     DEFAULT_CONFIG with its default (null where Kafka's default is
//     null, e.g. log.retention.ms); synonyms in Kafka's order over the
//     four layers (log.retention.*, log.roll.*). read_only is false for
//     the dynamic keys (config.IsDynamicBrokerConfig); keys naming a
//     password or secret are sensitive and have a null value. ConfigNames
//     filters (null = all).
//   - BROKER "" (the cluster-wide dynamic defaults, --entity-default):
//     the keys /config/brokers/<default> sets, DYNAMIC_DEFAULT_BROKER_CONFIG.
//     Another broker id, or a non-numeric name: INVALID_REQUEST.
//   - BROKER_LOGGER, this broker's id: every logger (gregor/logging: the
//     names given to zap's Logger.Named, and root) with its effective
//     level (Kafka's names: TRACE … FATAL), DYNAMIC_BROKER_LOGGER_CONFIG,
//     no synonyms. "" or another id: INVALID_REQUEST.
//   - Other resource types: INVALID_REQUEST.
//
// Version notes:
//   - v1: Source and ConfigSynonyms (when IncludeSynonyms); IsDefault is v0 only.
//   - v2: same as v1.  v3: ConfigType and Documentation (when
//     IncludeDocumentation).  v4: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
	"gregor/replication/controller"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(32, 0, 4, handleDescribeConfigs) }

// handleDescribeConfigs answers Later: a topic's overrides are read from
// ZooKeeper (/config/topics/<t>), which must not hold the connection's
// reader goroutine.
func handleDescribeConfigs(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	return b.async(func() kmsg.Response { return describeConfigs(b, rc, req) })
}

func describeConfigs(b *Broker, rc *wire.RequestContext, req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, r := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		err := b.configAuthError(rc, acl.OpDescribeConfigs, r.ResourceType, r.ResourceName)
		switch {
		case err != nil: // DescribeConfigs on the topic or the cluster
		case r.ResourceType == kmsg.ConfigResourceTypeTopic:
			rr.Configs, err = describeTopicConfigs(b, req, r)
		case r.ResourceType == kmsg.ConfigResourceTypeBroker:
			rr.Configs, err = describeBrokerConfigs(b, req, r)
		case r.ResourceType == kmsg.ConfigResourceTypeBrokerLogger:
			rr.Configs, err = describeBrokerLoggers(b, r) // configs_broker_logger.go
		default:
			err = &controller.Error{Code: kerr.InvalidRequest, Message: "Unsupported resource type " + r.ResourceType.String()}
		}
		rr.ErrorCode, rr.ErrorMessage = controller.Code(err)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

func wanted(names []string) func(string) bool {
	if names == nil {
		return func(string) bool { return true }
	}
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return func(n string) bool { return set[n] }
}

func describeTopicConfigs(b *Broker, req *kmsg.DescribeConfigsRequest, r kmsg.DescribeConfigsRequestResource) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	overrides, err := b.Topics.TopicConfig(r.ResourceName)
	if err != nil {
		return nil, err
	}
	want := wanted(r.ConfigNames)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	var entries []config.ConfigEntry
	if b.Dynamic != nil { // dynamic broker defaults: DYNAMIC_(DEFAULT_)BROKER_CONFIG sources
		cur, layers := b.Dynamic.Snapshot()
		entries = cur.DescribeTopicConfigsWith(overrides, b.Dynamic.Static().Raw, layers)
	} else {
		entries = b.currentConfig().DescribeTopicConfigs(overrides)
	}
	for _, e := range entries {
		if !want(e.Name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name = e.Name
		if !e.Sensitive {
			val := e.Value
			c.Value = &val
		}
		c.Source = e.Source
		c.IsDefault = e.Source == kmsg.ConfigSourceDefaultConfig
		c.ReadOnly, c.IsSensitive = e.ReadOnly, e.Sensitive
		if req.IncludeSynonyms {
			for _, s := range e.Synonyms {
				cs := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				sv := s.Value
				cs.Name, cs.Source = s.Name, s.Source
				if !e.Sensitive {
					cs.Value = &sv
				}
				c.ConfigSynonyms = append(c.ConfigSynonyms, cs)
			}
		}
		if k, ok := config.LookupTopicConfig(e.Name); ok {
			c.ConfigType = k.Type
			if req.IncludeDocumentation {
				doc := k.Doc
				c.Documentation = &doc
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func describeBrokerConfigs(b *Broker, req *kmsg.DescribeConfigsRequest, r kmsg.DescribeConfigsRequestResource) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	entries, err := b.brokerConfigEntries(r.ResourceName) // configs_broker.go
	if err != nil {
		return nil, err
	}
	want := wanted(r.ConfigNames)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, e := range entries {
		if !want(e.Name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Source, c.ConfigType = e.Name, e.Source, e.Type
		c.IsDefault = e.Source == kmsg.ConfigSourceDefaultConfig
		c.ReadOnly, c.IsSensitive = e.ReadOnly, e.Sensitive
		if !e.Sensitive && !e.Null {
			v := e.Value
			c.Value = &v
		}
		if req.IncludeSynonyms {
			for _, s := range e.Synonyms {
				cs := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				cs.Name, cs.Source = s.Name, s.Source
				if !e.Sensitive {
					sv := s.Value
					cs.Value = &sv
				}
				c.ConfigSynonyms = append(c.ConfigSynonyms, cs)
			}
		}
		out = append(out, c)
	}
	return out, nil
}
