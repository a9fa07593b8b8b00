package handlers

// IncrementalAlterConfigs: v0-1
//
// Behaviour (KIP-339): TOPIC resources only. Ops: SET (0), DELETE (1, back
// to the broker default), APPEND (2) and SUBTRACT (3) on list configs
// (cleanup.policy); APPEND/SUBTRACT on a non-list config, or SET without a
// value, answer INVALID_CONFIG. The whole resource is validated, then
// written to /config/topics/<t> with a /config/changes notification that
// every broker applies to the partitions it hosts
// (controller.AlterTopicConfig; any broker serves it, as in Kafka's
// ZooKeeper mode); ValidateOnly writes nothing. A config
// named twice, or a resource named twice in one request: INVALID_REQUEST.
// Unknown topic: UNKNOWN_TOPIC_OR_PARTITION. BROKER resources (a broker
// id, or "" = the cluster-wide default): SET and DELETE on the entity's
// dynamic configs in /config/brokers (configs_broker.go); APPEND and
// SUBTRACT on a broker list config as for topics. BROKER_LOGGER resources
// (this broker's id): SET a logger's level, DELETE it back to inheriting
// (configs_broker_logger.go); not stored, as in Kafka.
//
// Version notes: v1 flexible.

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
	"gregor/replication/controller"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(44, 0, 1, handleIncrementalAlterConfigs) }

func handleIncrementalAlterConfigs(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	return b.async(func() kmsg.Response {
		resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		dup := duplicateResources(len(req.Resources), func(i int) (kmsg.ConfigResourceType, string) {
			return req.Resources[i].ResourceType, req.Resources[i].ResourceName
		})
		for _, r := range req.Resources {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
			var err error
			if dup[resourceKey{r.ResourceType, r.ResourceName}] {
				err = &controller.Error{Code: kerr.InvalidRequest, Message: "Duplicate resource in request."}
			} else if err = b.configAuthError(rc, acl.OpAlterConfigs, r.ResourceType, r.ResourceName); err == nil {
				err = incrementalAlter(b, r, req.ValidateOnly)
			}
			rr.ErrorCode, rr.ErrorMessage = controller.Code(err)
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	})
}

func incrementalAlter(b *Broker, r kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	if r.ResourceType != kmsg.ConfigResourceTypeBrokerLogger {
		if err := checkAlterResource(r.ResourceType); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, c := range r.Configs {
		if seen[c.Name] {
			return &controller.Error{Code: kerr.InvalidRequest, Message: "Error due to duplicate config keys: " + c.Name}
		}
		seen[c.Name] = true
	}
	if r.ResourceType == kmsg.ConfigResourceTypeBrokerLogger {
		return alterBrokerLoggers(b, r, validateOnly) // configs_broker_logger.go
	}
	if r.ResourceType == kmsg.ConfigResourceTypeBroker {
		return b.alterBrokerConfig(r.ResourceName, func(m map[string]string) error {
			for _, c := range r.Configs {
				if err := applyIncrementalBroker(m, c); err != nil {
					return err
				}
			}
			return nil
		}, validateOnly)
	}
	return b.Topics.AlterTopicConfig(r.ResourceName, func(m map[string]string) error {
		for _, c := range r.Configs {
			if err := applyIncremental(m, c); err != nil {
				return err
			}
		}
		return nil
	}, validateOnly)
}

func applyIncremental(m map[string]string, c kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	invalid := func(msg string) error { return &controller.Error{Code: kerr.InvalidConfig, Message: msg} }
	switch c.Op {
	case kmsg.IncrementalAlterConfigOpSet:
		if c.Value == nil {
			return invalid("Null value not supported for : " + c.Name)
		}
		m[c.Name] = *c.Value
	case kmsg.IncrementalAlterConfigOpDelete:
		delete(m, c.Name)
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		ck, known := config.LookupTopicConfig(c.Name)
		if !known {
			return invalid("Unknown topic config name: " + c.Name)
		}
		if ck.Type != kmsg.ConfigTypeList {
			return invalid("Config value append is not allowed for config key: " + c.Name)
		}
		editConfigList(m, c, ck.Default)
	default:
		return &controller.Error{Code: kerr.InvalidRequest, Message: "Unknown operation for config " + c.Name}
	}
	return nil
}

// editConfigList applies an APPEND or SUBTRACT of c's comma-separated
// values to the list config m[c.Name] (def when m does not set it):
// appended values not yet present go last, subtracted ones are removed
// (Kafka's IncrementalAlterConfigs list semantics).
func editConfigList(m map[string]string, c kmsg.IncrementalAlterConfigsRequestResourceConfig, def string) {
	cur, ok := m[c.Name]
	if !ok {
		cur = def
	}
	list := splitConfigList(cur)
	var vals []string
	if c.Value != nil {
		vals = splitConfigList(*c.Value)
	}
	for _, v := range vals {
		i := slices.Index(list, v)
		if c.Op == kmsg.IncrementalAlterConfigOpAppend && i < 0 {
			list = append(list, v)
		} else if c.Op == kmsg.IncrementalAlterConfigOpSubtract && i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
	}
	m[c.Name] = strings.Join(list, ",")
}

func splitConfigList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// applyIncrementalBroker is one op on a BROKER entity's dynamic configs
// (Kafka's prepareIncrementalConfigs over KafkaConfig's keys).
func applyIncrementalBroker(m map[string]string, c kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	invalid := func(msg string) error { return &controller.Error{Code: kerr.InvalidConfig, Message: msg} }
	switch c.Op {
	case kmsg.IncrementalAlterConfigOpSet:
		if c.Value == nil {
			return invalid("Null value not supported for : " + c.Name)
		}
		m[c.Name] = *c.Value
	case kmsg.IncrementalAlterConfigOpDelete:
		delete(m, c.Name)
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		if c.Name != "log.cleanup.policy" { // the one dynamic list config
			return invalid("Config value append is not allowed for config key: " + c.Name)
		}
		editConfigList(m, c, "delete")
	default:
		return &controller.Error{Code: kerr.InvalidRequest, Message: "Unknown operation for config " + c.Name}
	}
	return nil
}

// checkAlterResource accepts TOPIC and BROKER resources (Kafka's
// "AlterConfigs is only supported for topics and brokers").
func checkAlterResource(t kmsg.ConfigResourceType) error {
	switch t {
	case kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeBroker:
		return nil
	}
	return &controller.Error{Code: kerr.InvalidRequest, Message: "AlterConfigs is only supported for topics and brokers, but resource type is " + strings.ToUpper(t.String())}
}

type resourceKey struct {
	t    kmsg.ConfigResourceType
	name string
}

// duplicateResources marks resources named more than once.
func duplicateResources(n int, at func(int) (kmsg.ConfigResourceType, string)) map[resourceKey]bool {
	count := map[resourceKey]int{}
	for i := 0; i < n; i++ {
		t, name := at(i)
		count[resourceKey{t, name}]++
	}
	dup := map[resourceKey]bool{}
	for k, c := range count {
		if c > 1 {
			dup[k] = true
		}
	}
	return dup
}
