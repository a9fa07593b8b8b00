package handlers

// ReplicaSource is what the data-path handlers (Produce, Fetch, ListOffsets,
// InitProducerId) need from the replica manager. Owned by the partition side;
// extend it as handlers need more.
type ReplicaSource interface {
}
