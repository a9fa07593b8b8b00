// Package zkclient is the broker side of Gregor's ZooKeeper-mode metadata:
// the reads and writes every broker makes on its own, whether or not it is
// the controller, as Kafka splits KafkaZkClient from KafkaController. A
// Client needs only the metadata store (and this broker's id, which the
// znodes it writes carry), so a broker builds it right after opening the
// store and before its replica manager, which writes ISR changes and
// reserves producer ids through it; the controller, built later, shares it
// for the topic config reads and the controller-epoch fence of the
// requests it serves.
//
// Everything here is a short synchronous store call, safe for concurrent
// use. Callers that must not wait on ZooKeeper (actors) run these calls
// off their Receive.
package zkclient

import (
	"go.uber.org/zap"

	"gregor/partition"
	"gregor/replication/metastore"
)

var _ partition.IsrWriter = (*Client)(nil)

// Client performs one broker's own ZooKeeper operations (see the package
// doc). Create with New; it owns no goroutine and needs no Close (the
// store's owner closes the store).
type Client struct {
	store    metastore.Store
	brokerID int32
	log      *zap.Logger
	fence    epochFence
}

// New builds the client of broker brokerID (broker.id) over store; log
// may be nil (no logging).
func New(store metastore.Store, brokerID int32, log *zap.Logger) *Client {
	if log == nil {
		log = zap.NewNop()
	}
	return &Client{store: store, brokerID: brokerID, log: log}
}

// Store is the metadata store the client reads and writes.
func (c *Client) Store() metastore.Store { return c.store }

// BrokerID is the broker.id the client writes as.
func (c *Client) BrokerID() int32 { return c.brokerID }
