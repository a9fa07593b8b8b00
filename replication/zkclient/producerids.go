package zkclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// reserveAttempts bounds ReserveProducerIDs' compare-and-set loop when
// other brokers reserve at the same time (each lost race re-reads).
const reserveAttempts = 20

// producerIDBlock is /latest_producer_id_block (Kafka's
// ProducerIdBlockZNode, version 1): the last block any broker reserved,
// block_start and block_end inclusive, as strings.
type producerIDBlock struct {
	Version    int    `json:"version"`
	Broker     int32  `json:"broker"`
	BlockStart string `json:"block_start"`
	BlockEnd   string `json:"block_end"`
}

// ReserveProducerIDs reserves the next block of size producer ids for
// this broker with a compare-and-set on /latest_producer_id_block
// (Kafka's ZkProducerIdManager), retrying on a version conflict with
// another broker. It returns [start, end). Errors: an unreadable znode, a
// store failure, or reserveAttempts lost races in a row.
func (c *Client) ReserveProducerIDs(size int64) (int64, int64, error) {
	for attempt := 0; attempt < reserveAttempts; attempt++ {
		data, version, err := c.store.Get(zkmeta.ProducerIDBlockPath)
		if errors.Is(err, metastore.ErrNoNode) {
			if err := metastore.EnsurePath(c.store, zkmeta.ProducerIDBlockPath); err != nil {
				return 0, 0, err
			}
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		start := int64(0)
		if len(data) > 0 {
			var b producerIDBlock
			if err := json.Unmarshal(data, &b); err != nil {
				return 0, 0, fmt.Errorf("zkclient: bad %s: %q", zkmeta.ProducerIDBlockPath, data)
			}
			end, err := strconv.ParseInt(b.BlockEnd, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("zkclient: bad block_end in %s: %q", zkmeta.ProducerIDBlockPath, data)
			}
			start = end + 1
		}
		next := producerIDBlock{Version: 1, Broker: c.brokerID, BlockStart: strconv.FormatInt(start, 10),
			BlockEnd: strconv.FormatInt(start+size-1, 10)}
		raw, _ := json.Marshal(next)
		if _, err := c.store.Set(zkmeta.ProducerIDBlockPath, raw, version); errors.Is(err, metastore.ErrBadVersion) {
			continue
		} else if err != nil {
			return 0, 0, err
		}
		return start, start + size, nil
	}
	return 0, 0, fmt.Errorf("zkclient: %s: too many concurrent reservations", zkmeta.ProducerIDBlockPath)
}
