package handlers

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
)

func TestStorageErrorForVersion(t *testing.T) {
	for _, tc := range []struct {
		code, version, want int16
	}{
		{kerr.KafkaStorageError.Code, 0, kerr.NotLeaderForPartition.Code},
		{kerr.KafkaStorageError.Code, 5, kerr.NotLeaderForPartition.Code},
		{kerr.KafkaStorageError.Code, 6, kerr.KafkaStorageError.Code},
		{kerr.KafkaStorageError.Code, 12, kerr.KafkaStorageError.Code},
		{kerr.OffsetOutOfRange.Code, 3, kerr.OffsetOutOfRange.Code},
		{0, 0, 0},
	} {
		if got := storageErrorForVersion(tc.code, tc.version); got != tc.want {
			t.Errorf("code %d at v%d: %d, want %d", tc.code, tc.version, got, tc.want)
		}
	}
}

// TestOfflineReplicaStorageErrorByVersion: a replica gone offline (its
// actor stopped for good) answers KAFKA_STORAGE_ERROR to Fetch v6+ and
// NOT_LEADER_OR_FOLLOWER to Fetch v0-v5, down-converted (v0-v3) or not
// (v4-v5), as Kafka's maybeDownConvertStorageError; Produce and
// ListOffsets answer KAFKA_STORAGE_ERROR at every version, as Kafka.
func TestOfflineReplicaStorageErrorByVersion(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	e.produce(9, -1, tpA, mkBatch(t, 2, 1, nil, false))
	h, _ := e.m.Get(tpA)
	e.sys.Root.Stop(h.PID())
	deadline := time.Now().Add(10 * time.Second)
	for h.View().Err != kerr.KafkaStorageError {
		if time.Now().After(deadline) {
			t.Fatalf("replica not offline: view error %v", h.View().Err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for v := int16(0); v <= 12; v++ {
		want := kerr.KafkaStorageError.Code
		if v <= 5 {
			want = kerr.NotLeaderForPartition.Code
		}
		p := decodeFetch(t, v, e.call(1, v, fetchReq(tpA, 0, 0, 0))).Topics[0].Partitions[0]
		if p.ErrorCode != want {
			t.Errorf("fetch v%d: code %d, want %d", v, p.ErrorCode, want)
		}
	}
	for _, v := range []int16{3, 9} {
		if p := e.produce(v, -1, tpA, mkBatch(t, 1, 1, nil, false)); p.ErrorCode != kerr.KafkaStorageError.Code {
			t.Errorf("produce v%d: code %d, want KAFKA_STORAGE_ERROR", v, p.ErrorCode)
		}
	}
	for _, v := range []int16{1, 7} {
		lo := kmsg.NewPtrListOffsetsRequest()
		lo.ReplicaID = -1
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = tpA.Topic
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = tpA.Partition, -1, -1
		lt.Partitions = append(lt.Partitions, lp)
		lo.Topics = append(lo.Topics, lt)
		if r := e.call(2, v, lo).Msg.(*kmsg.ListOffsetsResponse); r.Topics[0].Partitions[0].ErrorCode != kerr.KafkaStorageError.Code {
			t.Errorf("list offsets v%d: code %d, want KAFKA_STORAGE_ERROR", v, r.Topics[0].Partitions[0].ErrorCode)
		}
	}
}
