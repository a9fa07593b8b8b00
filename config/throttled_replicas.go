package config

import (
	"regexp"
	"strconv"
	"strings"
)

// Topic configs leader.replication.throttled.replicas and
// follower.replication.throttled.replicas (Kafka's QuotaConfigs, validated
// by LogConfig's ThrottledReplicaListValidator): the literal "*" (every
// replica of the topic) or a list "partitionId:brokerId,…". Empty entries
// are allowed, as Kafka's pattern "([0-9]+:[0-9]+)?" allows them.

// Names of the throttled-replicas topic configs.
const (
	LeaderThrottledReplicasKey   = "leader.replication.throttled.replicas"
	FollowerThrottledReplicasKey = "follower.replication.throttled.replicas"
)

var throttledEntry = regexp.MustCompile(`^([0-9]+:[0-9]+)?$`)

// splitListKeepEmpty splits a LIST config as Kafka's ConfigDef does: trimmed, on
// commas with surrounding white space, empty items kept; "" is the empty list.
func splitListKeepEmpty(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	items := strings.Split(v, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items
}

// ValidateThrottledReplicas checks a throttled-replicas value of topic
// config key. The error is a *ValueError with Kafka's message (the
// value shown as Java prints the parsed list, "[0:1, x]"); the broker
// answers it with INVALID_CONFIG.
func ValidateThrottledReplicas(key, v string) error {
	items := splitListKeepEmpty(v)
	if strings.Join(items, "") == "*" {
		return nil
	}
	for _, it := range items {
		if !throttledEntry.MatchString(it) {
			return &ValueError{Key: key, Value: "[" + strings.Join(items, ", ") + "]",
				Reason: key + " must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."}
		}
	}
	return nil
}

// ParseThrottledReplicas is what a broker takes from a valid
// throttled-replicas value (Kafka's TopicConfigHandler.
// parseThrottledPartitions): all for "*", else the partition ids of the
// entries naming brokerID (entries of other brokers are not this broker's
// concern). An invalid value is an error as ValidateThrottledReplicas.
func ParseThrottledReplicas(key, v string, brokerID int32) (all bool, partitions []int32, err error) {
	if err := ValidateThrottledReplicas(key, v); err != nil {
		return false, nil, err
	}
	items := splitListKeepEmpty(v)
	if strings.Join(items, "") == "*" {
		return true, nil, nil
	}
	for _, it := range items {
		p, b, ok := strings.Cut(it, ":")
		if !ok {
			continue // an empty entry
		}
		pid, perr := strconv.ParseInt(p, 10, 32)
		bid, berr := strconv.ParseInt(b, 10, 32)
		if perr != nil || berr != nil {
			// digits, but beyond an int: Kafka's toInt throws here too
			return false, nil, &ValueError{Key: key, Value: v, Reason: "partition and broker ids must be integers"}
		}
		if int32(bid) == brokerID {
			partitions = append(partitions, int32(pid))
		}
	}
	return false, partitions, nil
}
