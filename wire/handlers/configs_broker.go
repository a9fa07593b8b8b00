package handlers

// BROKER resources of AlterConfigs (33), IncrementalAlterConfigs (44) and
// DescribeConfigs (32): dynamic broker configs (KIP-226) in ZooKeeper
// mode, as Kafka's ZkAdminManager serves them. The resource name is a
// broker id, which must be this broker's ("Unexpected broker id, expected
// <id>, but received <name>", INVALID_REQUEST), or "" for the cluster-wide
// defaults (/config/brokers/<default>). The receiving broker validates the
// entity's whole new content (config.ValidateDynamic, then the effective
// config its components would get: dynamic.Manager.Check) and writes
// /config/brokers/<entity> with a /config/changes notification; every
// broker (this one included) applies it when the notification arrives.
// A refused config is INVALID_CONFIG "Invalid config value for resource
// ConfigResource(type=BROKER, name='<n>'): <reason>", nothing written.

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/config"
	"gregor/config/dynamic"
	"gregor/replication/controller"
)

// brokerEntity maps a BROKER resource name to its /config/brokers entity
// (ZkAdminManager.getBrokerId).
func (b *Broker) brokerEntity(name string) (string, error) {
	if name == "" {
		return config.DefaultEntity, nil
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return "", &controller.Error{Code: kerr.InvalidRequest, Message: "Broker id must be an integer, but it is: " + name}
	}
	if int32(id) != b.brokerID() {
		return "", &controller.Error{Code: kerr.InvalidRequest, Message: fmt.Sprintf("Unexpected broker id, expected %d, but received %s", b.brokerID(), name)}
	}
	return name, nil
}

// currentConfig is the effective broker config: with dynamic configs the
// current overlay (topic defaults included), else Config.
func (b *Broker) currentConfig() *config.Broker {
	if b.Dynamic != nil {
		return b.Dynamic.Current()
	}
	return b.Config
}

func (b *Broker) brokerID() int32 {
	if b.Config == nil {
		return 0
	}
	return b.Config.BrokerID
}

// alterBrokerConfig validates and writes one BROKER resource: mutate
// edits the entity's current dynamic configs.
func (b *Broker) alterBrokerConfig(name string, mutate func(map[string]string) error, validateOnly bool) error {
	entity, err := b.brokerEntity(name)
	if err != nil {
		return err
	}
	if b.Dynamic == nil || b.Users == nil {
		return &controller.Error{Code: kerr.InvalidRequest, Message: "Dynamic broker configs are not available on this broker"}
	}
	_, err = dynamic.Change(b.Users, entity, b.Dynamic.Static().PasswordEncoder, mutate, func(p map[string]string) error { return b.Dynamic.Check(entity, p) }, validateOnly)
	var de *config.DynamicError
	var ve *config.ValueError
	if errors.As(err, &de) || errors.As(err, &ve) {
		msg := err.Error() // Kafka's message alone, without the refusing component's name
		if de != nil {
			msg = de.Message
		} else {
			msg = ve.Error()
		}
		return &controller.Error{Code: kerr.InvalidConfig, Message: fmt.Sprintf("Invalid config value for resource ConfigResource(type=BROKER, name='%s'): %s", name, msg)}
	}
	var ce *controller.Error
	if err != nil && !errors.As(err, &ce) {
		return &controller.Error{Code: kerr.UnknownServerError, Message: err.Error()}
	}
	return err
}

// brokerConfigEntries are DescribeConfigs' entries of a BROKER resource:
// this broker's every config with dynamic sources, or for "" the dynamic
// defaults only (Kafka's createBrokerConfigEntry with perBrokerConfig
// false).
func (b *Broker) brokerConfigEntries(name string) ([]config.ConfigEntry, error) {
	cfg := b.Config
	if cfg == nil {
		cfg = config.Defaults()
	}
	if name == "" {
		if b.Dynamic == nil {
			return nil, nil
		}
		return config.DescribeDynamicDefaults(b.Dynamic.Static().Raw, b.Dynamic.Layers().Defaults), nil
	}
	if id, err := strconv.ParseInt(name, 10, 32); err != nil || int32(id) != cfg.BrokerID {
		return nil, &controller.Error{Code: kerr.InvalidRequest, Message: "Unexpected broker id, expected " +
			strconv.Itoa(int(cfg.BrokerID)) + " or empty string, but received " + name}
	}
	if b.Dynamic == nil {
		return cfg.DescribeBrokerConfigs(), nil
	}
	return b.Dynamic.Static().DescribeBrokerConfigsWith(b.Dynamic.Layers()), nil
}
