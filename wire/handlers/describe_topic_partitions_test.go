package handlers

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
	"gregor/wire"
)

func dtp(t *testing.T, br *Broker, req *kmsg.DescribeTopicPartitionsRequest) *kmsg.DescribeTopicPartitionsResponse {
	t.Helper()
	resp, ok := handleDescribeTopicPartitions(br, &wire.RequestContext{Key: 75}, req).TryResolve()
	if !ok {
		t.Fatal("not answered at once")
	}
	return resp.Msg.(*kmsg.DescribeTopicPartitionsResponse)
}

// Paging a full listing with a small limit visits every partition exactly
// once, in topic then partition order, cursors as Kafka sets them.
func TestDescribeTopicPartitionsPaging(t *testing.T) {
	cfg := config.Defaults()
	br := &Broker{Topics: snapshotTopics{s: bigSnapshot(5, 3)}, Config: cfg}
	var got []string
	var cursors []string
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for page := 0; page < 10; page++ {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		req.ResponsePartitionLimit = 7
		req.Cursor = cursor
		resp := dtp(t, br, req)
		for _, rt := range resp.Topics {
			if rt.ErrorCode != 0 {
				t.Fatalf("topic %s error %d", *rt.Topic, rt.ErrorCode)
			}
			for _, p := range rt.Partitions {
				got = append(got, fmt.Sprintf("%s-%d", *rt.Topic, p.Partition))
			}
		}
		if resp.NextCursor == nil {
			break
		}
		cursors = append(cursors, fmt.Sprintf("%s:%d", resp.NextCursor.Topic, resp.NextCursor.Partition))
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	if len(got) != 15 || got[0] != "topic-000-0" || got[14] != "topic-004-2" {
		t.Fatalf("partitions %v", got)
	}
	seen := map[string]bool{}
	for _, g := range got {
		if seen[g] {
			t.Fatalf("%s twice in %v", g, got)
		}
		seen[g] = true
	}
	// 7 = topic-000 (3) + topic-001 (3) + topic-002-0; then 002-1,2 + 003 + 004-0,1; then 004-2.
	if fmt.Sprint(cursors) != "[topic-002:1 topic-004:2]" {
		t.Fatalf("cursors %v", cursors)
	}

	// The broker's max.request.partition.size.limit caps the client's limit.
	cfg.MaxRequestPartitionSizeLimit = 2
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 100
	resp := dtp(t, br, req)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 || resp.NextCursor == nil || resp.NextCursor.Partition != 2 {
		t.Fatalf("capped page: %d topics, cursor %+v", len(resp.Topics), resp.NextCursor)
	}
}

func TestDescribeTopicPartitionsNamed(t *testing.T) {
	br := &Broker{Topics: snapshotTopics{s: bigSnapshot(3, 2)}, Config: config.Defaults()}
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 2000
	for _, n := range []string{"topic-002", "nope", "bad/name", "topic-000"} {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = n
		req.Topics = append(req.Topics, rt)
	}
	resp := dtp(t, br, req)
	want := map[string]int16{"topic-000": 0, "topic-002": 0, "nope": kerr.UnknownTopicOrPartition.Code, "bad/name": kerr.InvalidTopicException.Code}
	if len(resp.Topics) != 4 {
		t.Fatalf("%d topics", len(resp.Topics))
	}
	for _, rt := range resp.Topics {
		if code, ok := want[*rt.Topic]; !ok || rt.ErrorCode != code {
			t.Errorf("%s: error %d, want %d", *rt.Topic, rt.ErrorCode, code)
		}
		if rt.ErrorCode == 0 && (len(rt.Partitions) != 2 || rt.Partitions[0].LeaderID != 1 || len(rt.Partitions[0].ISR) != 3) {
			t.Errorf("%s: partitions %+v", *rt.Topic, rt.Partitions)
		}
	}
	// A cursor naming a topic outside the list: INVALID_REQUEST on each.
	req.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "topic-001"}
	resp = dtp(t, br, req)
	for _, rt := range resp.Topics {
		if rt.ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("cursor outside the list: %s error %d", *rt.Topic, rt.ErrorCode)
		}
	}
}
