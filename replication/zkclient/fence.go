package zkclient

import "sync"

// epochFence is the highest controller epoch this broker has accepted a
// controller request from (Kafka's ReplicaManager.controllerEpoch).
type epochFence struct {
	mu   sync.Mutex
	seen int32
}

// NoteControllerEpoch records a controller epoch heard from the active
// controller (this broker's own controller applying a request in-process),
// so a deposed controller's later requests are refused.
func (c *Client) NoteControllerEpoch(epoch int32) {
	c.fence.mu.Lock()
	if epoch > c.fence.seen {
		c.fence.seen = epoch
	}
	c.fence.mu.Unlock()
}

// AcceptControllerEpoch reports whether a LeaderAndIsr, UpdateMetadata or
// StopReplica request from controller epoch epoch may be applied: false
// when a newer controller has been heard from (the caller answers
// STALE_CONTROLLER_EPOCH, error code 11, as Kafka's ReplicaManager does);
// true otherwise, and epoch becomes the one seen.
func (c *Client) AcceptControllerEpoch(epoch int32) bool {
	c.fence.mu.Lock()
	defer c.fence.mu.Unlock()
	if epoch < c.fence.seen {
		return false
	}
	c.fence.seen = epoch
	return true
}

// SeenControllerEpoch is the highest controller epoch this broker has
// accepted a request from (0 before the first).
func (c *Client) SeenControllerEpoch() int32 {
	c.fence.mu.Lock()
	defer c.fence.mu.Unlock()
	return c.fence.seen
}
