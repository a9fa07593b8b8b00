package controller

import "gregor/replication/metadata"

// OnMetadataChange sets fn (nil = none) to be called after every change
// of this broker's metadata cache with the previous and the new snapshot:
// snapshots this controller publishes (single node, active controller)
// and the UpdateMetadata it receives from the active controller. fn runs
// on the publisher's goroutine (the controller actor, or the connection
// serving an UpdateMetadata; two may run at once): it must be quick, must
// not block and must not call the Controller. The group coordinator drops the offsets of
// deleted topics from it.
func (c *Controller) OnMetadataChange(fn func(prev, next *metadata.Snapshot)) {
	c.cache.OnPublish(fn)
}
