package handlers

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors/coordinator"
	"gregor/replication/metadata"
)

// TestTxnOffsetCommitHandler: every version v0–v4 round-trips; partitions
// the metadata does not know are UNKNOWN_TOPIC_OR_PARTITION in the
// request's order, interleaved with the coordinator's answers for the
// others; the staged offset is invisible to OffsetFetch until
// CompleteTxnOffsets, and require_stable says UNSTABLE_OFFSET_COMMIT.
func TestTxnOffsetCommitHandler(t *testing.T) {
	b, topic := groupBroker(t)
	b.Topics = snapshotTopics{s: &metadata.Snapshot{ControllerID: 0, Topics: map[string]*metadata.Topic{
		"in": {Name: "in", Partitions: []metadata.Partition{{Partition: 0}, {Partition: 1}}},
	}}}
	// The completion half, as the WriteTxnMarkers handler calls it
	// (its optional GroupTxnCompleter interface).
	coord := b.Groups.(interface {
		CompleteTxnOffsets(offsetsPartition int32, producerID int64, producerEpoch int16, commit bool)
	})
	for v := int16(0); v <= 4; v++ {
		group := "g" + string(rune('0'+v))
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = v, "tx", group, 1000+int64(v), 0
		req.Generation = -1
		for _, name := range []string{"in", "gone"} {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = name
			for _, p := range []int32{0, 5, 1} {
				rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch = p, 100+int64(p), 1
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		resp := groupCall[*kmsg.TxnOffsetCommitResponse](t, b, req)
		want := [][]int16{
			{0, kerr.UnknownTopicOrPartition.Code, 0},
			{kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code},
		}
		if len(resp.Topics) != 2 {
			t.Fatalf("v%d: %+v", v, resp)
		}
		for ti, rt := range resp.Topics {
			if rt.Topic != req.Topics[ti].Topic || len(rt.Partitions) != 3 {
				t.Fatalf("v%d topic %d: %+v", v, ti, rt)
			}
			for pi, rp := range rt.Partitions {
				if rp.Partition != req.Topics[ti].Partitions[pi].Partition || rp.ErrorCode != want[ti][pi] {
					t.Errorf("v%d %s[%d]: partition %d code %d, want %d", v, rt.Topic, pi, rp.Partition, rp.ErrorCode, want[ti][pi])
				}
			}
		}

		fetch := func() kmsg.OffsetFetchResponseTopicPartition {
			f := kmsg.NewPtrOffsetFetchRequest()
			f.Version, f.Group, f.RequireStable = 7, group, true
			ft := kmsg.NewOffsetFetchRequestTopic()
			ft.Topic, ft.Partitions = "in", []int32{1}
			f.Topics = append(f.Topics, ft)
			r := groupCall[*kmsg.OffsetFetchResponse](t, b, f)
			return r.Topics[0].Partitions[0]
		}
		if p := fetch(); p.ErrorCode != kerr.UnstableOffsetCommit.Code {
			t.Fatalf("v%d: require_stable before the marker %+v", v, p)
		}
		p := coordinator.PartitionFor(group, 50)
		if _, err := topic.AppendMarker(p, req.ProducerID, 0, true); err != nil {
			t.Fatal(err)
		}
		coord.CompleteTxnOffsets(p, req.ProducerID, 0, true)
		wantEpoch := int32(1)
		if v < 2 {
			wantEpoch = -1 // no LeaderEpoch before v2
		}
		if p := fetch(); p.ErrorCode != 0 || p.Offset != 101 || p.LeaderEpoch != wantEpoch {
			t.Fatalf("v%d: after the commit marker %+v", v, p)
		}
	}
}

func TestTxnOffsetCommitWithoutCoordinator(t *testing.T) {
	b := &Broker{}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.Group = 3, "g"
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "in"
	rt.Partitions = append(rt.Partitions, kmsg.NewTxnOffsetCommitRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp := groupCall[*kmsg.TxnOffsetCommitResponse](t, b, req)
	if resp.Topics[0].Partitions[0].ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("no coordinator: %+v", resp.Topics[0].Partitions[0])
	}
}
