package handlers

// DescribeLogDirs: v0-v4 (Kafka 3.9's range)
//
// Behaviour (KafkaApis.handleDescribeLogDirsRequest and
// ReplicaManager.describeLogDirs): DESCRIBE on CLUSTER or
// CLUSTER_AUTHORIZATION_FAILED with no results (the top-level error code
// is encoded from v3; older versions see an empty result list, as from
// Kafka). Then one result per configured log dir (log.dirs), by absolute
// path: an offline dir gets KAFKA_STORAGE_ERROR and nothing else; an
// online one its filesystem's total and usable bytes (v4 fields) and,
// per topic, the partitions it hosts that the request asked for (null
// topics = every hosted partition) with each log's size in bytes,
// offset lag and is_future: a current replica's lag is max(HW - LEO, 0);
// a future replica (the copy an AlterReplicaLogDirs is building in that
// dir, storage/manager_future.go) has is_future true and lag max(current
// LEO - future LEO, 0). Topics with no asked-for partition in a dir are
// left out.
//
// Version notes: v2+ flexible; v3 adds the top-level error code; v4
// total_bytes and usable_bytes.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/storage"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(35, 0, 4, handleDescribeLogDirs) }

func handleDescribeLogDirs(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeLogDirsRequest)
	if !b.authorizeCluster(rc, acl.OpDescribe) { // Kafka's check
		resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	// statfs and the segment walk are disk work: off the reader.
	return b.async(func() kmsg.Response { return describeLogDirs(b, req) })
}

func describeLogDirs(b *Broker, req *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if b.LogDirs == nil {
		resp.ErrorCode = kerr.UnknownServerError.Code
		return resp
	}
	var want map[storage.TopicPartition]bool // nil = all
	if req.Topics != nil {
		want = map[storage.TopicPartition]bool{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				want[storage.TopicPartition{Topic: t.Topic, Partition: p}] = true
			}
		}
	}
	for _, d := range b.LogDirs.DescribeDirs() {
		rd := kmsg.NewDescribeLogDirsResponseDir()
		rd.Dir = d.Dir
		if d.Err != nil {
			code := kerr.KafkaStorageError.Code
			if !d.Offline {
				code = kerr.UnknownServerError.Code
			}
			b.Log.Warn("unable to describe replica dirs", zap.String("dir", d.Dir), zap.Error(d.Err))
			rd.ErrorCode = code
			resp.Dirs = append(resp.Dirs, rd)
			continue
		}
		rd.TotalBytes, rd.UsableBytes = d.TotalBytes, d.UsableBytes
		for _, r := range d.Replicas { // sorted by topic, then partition
			if want != nil && !want[r.TP] {
				continue
			}
			if n := len(rd.Topics); n == 0 || rd.Topics[n-1].Topic != r.TP.Topic {
				t := kmsg.NewDescribeLogDirsResponseDirTopic()
				t.Topic = r.TP.Topic
				rd.Topics = append(rd.Topics, t)
			}
			p := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			p.Partition, p.Size, p.OffsetLag, p.IsFuture = r.TP.Partition, r.Size, r.OffsetLag, r.IsFuture
			t := &rd.Topics[len(rd.Topics)-1]
			t.Partitions = append(t.Partitions, p)
		}
		resp.Dirs = append(resp.Dirs, rd)
	}
	return resp
}
