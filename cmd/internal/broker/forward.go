package broker

import (
	"net"
	"strconv"

	"gregor/config"
	"gregor/replication/controller"
	"gregor/replication/forward"
	"gregor/replication/metadata"
	"gregor/replication/metastore"
	"gregor/replication/zkclient"
	"gregor/replication/zkmeta"
	"gregor/wire/security/clientsec"
)

// newForwarder is the handlers' KIP-590 forwarder: it reads the active
// controller from /controller in store (not the metadata cache, which
// learns of a new controller only with its first UpdateMetadata) and
// reaches it on the inter-broker listener with sec.
func newForwarder(cfg *config.Broker, cache *metadata.Cache, zk *zkclient.Client, store metastore.Store, sec clientsec.Client) *forward.Forwarder {
	endpoints := controller.NewEndpoints(cfg, cache, zk)
	return forward.New(forward.Config{
		Self: cfg.BrokerID,
		Controller: func() (int32, error) {
			data, _, err := store.Get(zkmeta.ControllerPath)
			if err != nil {
				return -1, err
			}
			return zkmeta.DecodeController(data)
		},
		Endpoint: func(id int32) (string, bool) {
			host, port, ok := endpoints.BrokerEndpoint(id)
			return net.JoinHostPort(host, strconv.Itoa(int(port))), ok
		},
		Security: sec,
		ClientID: forward.ClientID(cfg.BrokerID),
	})
}
