package handlers

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/controller"
	"gregor/wire"
	"gregor/wire/security/acl"
)

// configAuthError is the configs APIs' check (Kafka's ConfigHelper and
// AlterConfigs handling): op (DescribeConfigs or AlterConfigs) on the
// topic for a topic resource, on the cluster for a broker or broker
// logger resource; nil when allowed or for other types (their own
// validation refuses them).
func (b *Broker) configAuthError(rc *wire.RequestContext, op acl.Operation, t kmsg.ConfigResourceType, name string) error {
	switch t {
	case kmsg.ConfigResourceTypeTopic:
		if !b.authorize(rc, op, acl.ResourceTopic, name) {
			return &controller.Error{Code: kerr.TopicAuthorizationFailed}
		}
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		if !b.authorizeCluster(rc, op) {
			return &controller.Error{Code: kerr.ClusterAuthorizationFailed}
		}
	}
	return nil
}
