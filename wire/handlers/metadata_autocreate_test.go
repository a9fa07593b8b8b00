package handlers

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/controller"
	"gregor/replication/metadata"
)

// TestMetadataAutoCreateOfExistingTopicIsLeaderNotAvailable: when
// auto-creation finds the topic already exists (another broker created it,
// or this broker's metadata cache has not caught up), Metadata answers
// LEADER_NOT_AVAILABLE as Kafka does, which clients retry — not
// TOPIC_ALREADY_EXISTS or UNKNOWN_TOPIC_OR_PARTITION, which they give up on.
func TestMetadataAutoCreateOfExistingTopicIsLeaderNotAvailable(t *testing.T) {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(9)
	name := "t"
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = &name
	req.Topics = append(req.Topics, rt)
	snap := &metadata.Snapshot{Topics: map[string]*metadata.Topic{}, TopicsByID: map[[16]byte]*metadata.Topic{}}
	created := map[string]error{name: &controller.Error{Code: kerr.TopicAlreadyExists, Message: "exists"}}
	resp := (&Broker{}).buildMetadata(req, "PLAINTEXT", snap, created, metadataAuth{})
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code {
		t.Fatalf("topics %+v, want one with LEADER_NOT_AVAILABLE", resp.Topics)
	}
}
