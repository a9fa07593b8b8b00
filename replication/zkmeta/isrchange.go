package zkmeta

import "encoding/json"

// IsrChangePartition names one partition in an ISR change notification.
type IsrChangePartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// EncodeIsrChange renders an /isr_change_notification/isr_change_<seq>
// znode (IsrChangeNotificationSequenceZNode, version 1): the partitions
// whose ISR a leader changed, for the controller to propagate with
// UpdateMetadata.
func EncodeIsrChange(parts []IsrChangePartition) []byte {
	if parts == nil {
		parts = []IsrChangePartition{}
	}
	raw, _ := json.Marshal(struct {
		Version    int                  `json:"version"`
		Partitions []IsrChangePartition `json:"partitions"`
	}{1, parts})
	return raw
}

// DecodeIsrChange parses an ISR change notification.
func DecodeIsrChange(data []byte) ([]IsrChangePartition, error) {
	var v struct {
		Partitions []IsrChangePartition `json:"partitions"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, badData("isr change notification", err)
	}
	return v.Partitions, nil
}
