package zkclient

import (
	"errors"

	"go.uber.org/zap"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// TopicConfig reads a topic's config overrides from /config/topics/<t>
// (Kafka's KafkaZkClient.getEntityConfigs), as a broker does when it
// starts a replica. An absent znode is no overrides; an unreadable or
// malformed one is logged and also read as none (the broker defaults), so
// a replica still starts.
func (c *Client) TopicConfig(topic string) map[string]string {
	data, _, err := c.store.Get(zkmeta.TopicConfigPath(topic))
	if err != nil {
		if !errors.Is(err, metastore.ErrNoNode) {
			c.log.Warn("reading topic config", zap.String("topic", topic), zap.Error(err))
		}
		return map[string]string{}
	}
	m, err := zkmeta.DecodeConfig(data)
	if err != nil {
		c.log.Warn("bad topic config znode", zap.String("topic", topic), zap.Error(err))
		return map[string]string{}
	}
	return m
}

// BrokerInfo reads broker id's registration /brokers/ids/<id>; false when
// it is not registered or the znode cannot be read or decoded.
func (c *Client) BrokerInfo(id int32) (zkmeta.BrokerInfo, bool) {
	data, _, err := c.store.Get(zkmeta.BrokerPath(id))
	if err != nil {
		return zkmeta.BrokerInfo{}, false
	}
	info, err := zkmeta.DecodeBrokerInfo(id, data)
	if err != nil {
		return zkmeta.BrokerInfo{}, false
	}
	return info, true
}
