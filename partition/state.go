// Package partition is one partition replica: the pure state (role, leader
// epoch, log end offset, high watermark, ISR, producer state), the Core
// that decides on it and returns effects (core.go), and the actor that
// performs them, is the only writer of its storage log and writes ISR
// changes off its goroutine. The replica manager hosts one partition
// actor per partition.
package partition

import "gregor/storage"

// TopicPartition names one partition (same type as the storage key).
type TopicPartition = storage.TopicPartition

// LeaderAndIsr is the state the controller assigns to one partition replica
// (the per-partition part of Kafka's LeaderAndIsr request). In single-node
// mode the embedded controller sends Leader = this broker, ISR = [this broker].
type LeaderAndIsr struct {
	TopicPartition
	TopicID         [16]byte
	ControllerEpoch int32
	Leader          int32   // broker id of the leader; -1 = none
	LeaderEpoch     int32   // bumped on every leader change
	ISR             []int32 // in-sync replica broker ids
	Replicas        []int32 // assigned replicas, preferred leader first
	ZkVersion       int32   // partition state version (conditional writes)
	Config          storage.LogConfig
	// MinInsyncReplicas is the topic's min.insync.replicas (topic config
	// over the broker's min.insync.replicas): acks=-1 produces are refused
	// with NOT_ENOUGH_REPLICAS when the ISR is smaller. 0 means 1.
	MinInsyncReplicas int
}
