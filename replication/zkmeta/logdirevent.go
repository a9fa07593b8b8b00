package zkmeta

import (
	"encoding/json"
	"errors"
)

var errNoBroker = errors.New("no broker id")

// LogDirEventPrefix is the sequential znode prefix of log dir event
// notifications (LogDirEventNotificationSequenceZNode).
const LogDirEventPrefix = LogDirEventNotificationPath + "/log_dir_event_"

// LogDirFailureEvent is the event code Kafka writes for a failed log dir
// (LogDirEventNotificationHandler.LogDirFailureEvent).
const LogDirFailureEvent = 1

// LogDirEvent is one /log_dir_event_notification/log_dir_event_<seq>
// znode: broker reports replicas it can no longer serve (KIP-112).
//
// Kafka writes {"version":1,"broker":<id>,"event":1} and its controller
// then sends LeaderAndIsr to the broker to learn from the per-partition
// KAFKA_STORAGE_ERROR which replicas are offline. Gregor adds the
// offline partitions to the same znode ("partitions", ignored by Kafka's
// decoder), so its controller needs no round trip; a notification
// without partitions names none.
type LogDirEvent struct {
	Broker     int32
	Event      int
	Partitions []IsrChangePartition
}

type logDirEventJSON struct {
	Version    int                  `json:"version"`
	Broker     int32                `json:"broker"`
	Event      int                  `json:"event"`
	Partitions []IsrChangePartition `json:"partitions,omitempty"`
}

// EncodeLogDirEvent renders a log dir failure notification of broker for
// the given offline partitions.
func EncodeLogDirEvent(broker int32, parts []IsrChangePartition) []byte {
	raw, _ := json.Marshal(logDirEventJSON{Version: 1, Broker: broker, Event: LogDirFailureEvent, Partitions: parts})
	return raw
}

// DecodeLogDirEvent parses a log dir event notification; errors wrap
// ErrBadData.
func DecodeLogDirEvent(data []byte) (LogDirEvent, error) {
	var v logDirEventJSON
	v.Broker = -1
	if err := json.Unmarshal(data, &v); err != nil {
		return LogDirEvent{}, badData("log dir event notification", err)
	}
	if v.Broker < 0 {
		return LogDirEvent{}, badData("log dir event notification", errNoBroker)
	}
	return LogDirEvent{Broker: v.Broker, Event: v.Event, Partitions: v.Partitions}, nil
}
