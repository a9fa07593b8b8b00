package handlers

// AlterConfigs: v0-2
//
// Behaviour: the legacy, non-incremental form: a TOPIC resource's overrides
// are REPLACED by the configs sent (null values are dropped), validated as a
// whole (INVALID_CONFIG), written to /config/topics/<t> with a
// /config/changes notification that every broker applies
// (controller.ChangeTopicConfig); any broker serves it, as in Kafka's
// ZooKeeper mode.
// ValidateOnly writes nothing. Unknown topic: UNKNOWN_TOPIC_OR_PARTITION;
// BROKER resources (a broker id or "" = the default): the entity's
// dynamic configs in /config/brokers are replaced the same way
// (configs_broker.go); a resource named twice: INVALID_REQUEST.
// BROKER_LOGGER: INVALID_REQUEST "Unknown resource type 8" (log levels
// change with IncrementalAlterConfigs only, as in Kafka).
//
// Version notes: v1 same as v0 (throttle after response); v2 flexible.

import (
	"maps"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/controller"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(33, 0, 2, handleAlterConfigs) }

func handleAlterConfigs(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.AlterConfigsRequest)
	return b.async(func() kmsg.Response {
		resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
		dup := duplicateResources(len(req.Resources), func(i int) (kmsg.ConfigResourceType, string) {
			return req.Resources[i].ResourceType, req.Resources[i].ResourceName
		})
		for _, r := range req.Resources {
			rr := kmsg.NewAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
			var err error
			switch {
			case dup[resourceKey{r.ResourceType, r.ResourceName}]:
				err = &controller.Error{Code: kerr.InvalidRequest, Message: "Duplicate resource in request."}
			case r.ResourceType == kmsg.ConfigResourceTypeBrokerLogger:
				// Kafka's legacy AlterConfigs never took log levels (KIP-412
				// is incremental only); refused before authorization, as there.
				err = &controller.Error{Code: kerr.InvalidRequest, Message: "Unknown resource type 8"}
			default: // AlterConfigs on the topic or the cluster first
				if err = b.configAuthError(rc, acl.OpAlterConfigs, r.ResourceType, r.ResourceName); err == nil {
					err = checkAlterResource(r.ResourceType)
				}
			}
			if err == nil {
				next := map[string]string{}
				for _, c := range r.Configs {
					if c.Value != nil {
						next[c.Name] = *c.Value
					}
				}
				replace := func(m map[string]string) error {
					maps.DeleteFunc(m, func(string, string) bool { return true })
					maps.Copy(m, next)
					return nil
				}
				if r.ResourceType == kmsg.ConfigResourceTypeBroker {
					err = b.alterBrokerConfig(r.ResourceName, replace, req.ValidateOnly)
				} else {
					err = b.Topics.AlterTopicConfig(r.ResourceName, replace, req.ValidateOnly)
				}
			}
			rr.ErrorCode, rr.ErrorMessage = controller.Code(err)
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	})
}
