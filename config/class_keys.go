package config

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Keys whose value is a Java class, or that switch on something Gregor
// does not have. The default (empty, or the class Kafka itself uses by
// default) is accepted; any other value is refused at load rather than
// accepted and ignored.

// JmxReporter is metric.reporters' one accepted class: Kafka's own JMX
// reporter (auto.include.jmx.reporter adds it in 3.x). Gregor's metrics
// are Prometheus text on admin.listener, so naming it changes nothing.
const JmxReporter = "org.apache.kafka.common.metrics.JmxReporter"

// zkNIOSocket is ZooKeeper's default client socket, which a
// zookeeper.clientCnxnSocket naming it asks for explicitly.
const zkNIOSocket = "org.apache.zookeeper.ClientCnxnSocketNIO"

func noJavaClass(key, v string) error {
	return invalid(key, v, "Gregor cannot load Java classes: %s=%s", key, v)
}

// classKey accepts "" and the given defaults only.
func classKey(typ kmsg.ConfigType, def string, accepted ...string) brokerKey {
	set := func(_ *Broker, key, v string) error {
		if v == "" || v == def {
			return nil
		}
		for _, a := range accepted {
			if v == a {
				return nil
			}
		}
		return noJavaClass(key, v)
	}
	if def == "" {
		return nullKey(set, typ)
	}
	return checkKey(set, typ, def)
}

// reporterList accepts a list of metric reporter classes made only of
// the accepted ones (none: "").
func reporterList(accepted ...string) setter {
	return func(_ *Broker, key, v string) error {
		for _, c := range strings.Split(v, ",") {
			c = strings.TrimSpace(c)
			if c == "" {
				continue
			}
			ok := false
			for _, a := range accepted {
				ok = ok || c == a
			}
			if !ok {
				return noJavaClass(key, c)
			}
		}
		return nil
	}
}

var classKeys = map[string]brokerKey{
	"metric.reporters":        checkKey(reporterList(JmxReporter), kmsg.ConfigTypeList, ""),
	"kafka.metrics.reporters": checkKey(reporterList(), kmsg.ConfigTypeList, ""),
	// Kafka's CreateTopicPolicy / AlterConfigPolicy plug-ins (null by default).
	"create.topic.policy.class.name": classKey(kmsg.ConfigTypeClass, ""),
	"alter.config.policy.class.name": classKey(kmsg.ConfigTypeClass, ""),
	// ClientCnxnSocketNetty is what ZooKeeper TLS needs; Gregor's
	// ZooKeeper client (go-zookeeper/zk) has its own socket and no TLS.
	"zookeeper.clientCnxnSocket": classKey(kmsg.ConfigTypeString, "", zkNIOSocket),
	// Delegation tokens (KIP-48): a secret switches them on in Kafka;
	// Gregor serves none of the DelegationToken APIs.
	"delegation.token.master.key": nullKey(func(_ *Broker, key, v string) error {
		if v != "" {
			return invalid(key, "[hidden]", "Gregor has no delegation tokens (CreateDelegationToken and the other DelegationToken APIs are not served)")
		}
		return nil
	}, kmsg.ConfigTypePassword),
	"delegation.token.secret.key": nullKey(func(_ *Broker, key, v string) error {
		if v != "" {
			return invalid(key, "[hidden]", "Gregor has no delegation tokens (CreateDelegationToken and the other DelegationToken APIs are not served)")
		}
		return nil
	}, kmsg.ConfigTypePassword),
	// ZkData.defaultAcls needs a SASL-authenticated ZooKeeper session.
	"zookeeper.set.acl": checkKey(func(_ *Broker, key, v string) error {
		on, err := parseBool(key, v)
		if err != nil {
			return err
		}
		if on {
			return invalid(key, v, "zookeeper.set.acl is true, but Gregor's ZooKeeper client authenticates with neither SASL nor TLS, so the znodes it creates cannot be given CREATOR_ALL ACLs")
		}
		return nil
	}, kmsg.ConfigTypeBoolean, "false"),
}

func init() {
	for k, v := range classKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
}
