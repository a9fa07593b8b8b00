package controller

import (
	"gregor/config"
	"gregor/partition"
	"gregor/replication/metadata"
	"gregor/replication/zkclient"
)

// Endpoints resolves broker ids to inter-broker addresses for the replica
// fetchers (partition.EndpointLookup) from what exists before the
// controller: the broker's metadata cache and its ZooKeeper client. So the
// fetchers, which the replica manager builds, do not need the controller,
// which needs the replica manager. Safe for concurrent use.
type Endpoints struct {
	listener string // config.Security.InterBrokerListener; "" = the first endpoint
	cache    *metadata.Cache
	zk       *zkclient.Client
}

var _ partition.EndpointLookup = Endpoints{}

// NewEndpoints reads cfg's inter-broker listener (inter.broker.listener.name,
// or the one named by security.inter.broker.protocol), the cache (the one
// given to the controller as Options.Cache) and, for brokers the cache
// does not know yet, their /brokers/ids/<id> registration through zk.
func NewEndpoints(cfg *config.Broker, cache *metadata.Cache, zk *zkclient.Client) Endpoints {
	return Endpoints{listener: cfg.Security.InterBrokerListener, cache: cache, zk: zk}
}

// BrokerEndpoint implements partition.EndpointLookup: the inter-broker
// address of broker id from the metadata cache, falling back to its
// /brokers/ids/<id> registration (a LeaderAndIsr can arrive before the
// UpdateMetadata naming a new leader); ok is false when neither has it.
func (e Endpoints) BrokerEndpoint(id int32) (string, int32, bool) {
	if b, ok := e.cache.Load().Broker(id); ok {
		if e.listener != "" {
			if hp, ok := b.Listeners[e.listener]; ok {
				return hp.Host, hp.Port, true
			}
		}
		return b.Host, b.Port, true
	}
	info, ok := e.zk.BrokerInfo(id)
	if !ok {
		return "", 0, false
	}
	return interBrokerEndpoint(info, e.listener)
}
