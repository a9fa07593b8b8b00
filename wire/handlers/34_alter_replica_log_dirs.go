package handlers

// AlterReplicaLogDirs: v0-v2 (Kafka 3.9's range)
//
// Behaviour (KafkaApis.handleAlterReplicaLogDirsRequest and
// ReplicaManager.alterReplicaLogDirs): ALTER on CLUSTER, or every
// partition answers CLUSTER_AUTHORIZATION_FAILED. Each partition is moved
// to its dir (an absolute path of one of log.dirs) by
// partition.Manager.AlterLogDir: LOG_DIR_NOT_FOUND for a dir not in
// log.dirs, KAFKA_STORAGE_ERROR for an offline dir or partition (or any
// offline log dir: no future replica is created then),
// INVALID_TOPIC_EXCEPTION when the future dir's name would pass 255
// bytes, REPLICA_NOT_AVAILABLE for a partition not hosted here (the dir
// is remembered; a later LeaderAndIsr creates the log there), NONE when
// the log is there already (cancelling a move elsewhere) or the move has
// started: the copy (a "-future" dir caught up, then swapped in) runs in
// the background and DescribeLogDirs shows it with is_future. A partition
// named under two dirs takes the last one (Kafka builds a map). Results
// are grouped by topic in first-seen order.
//
// Version notes: v1 same as v0; v2 flexible.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/storage"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(34, 0, 2, handleAlterReplicaLogDirs) }

// LogDirMover moves hosted partitions between log dirs (AlterReplicaLogDirs);
// the *partition.Manager implements it.
type LogDirMover interface {
	// AlterLogDir moves tp to the log dir with absolute path dir, waiting
	// for the partition at most timeout; the string explains an error.
	AlterLogDir(tp storage.TopicPartition, dir string, timeout time.Duration) (*kerr.Error, string)
}

// alterLogDirTimeout bounds the wait for each partition (the future log's
// creation; Kafka does it inline in the request thread).
const alterLogDirTimeout = 30 * time.Second

func handleAlterReplicaLogDirs(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.AlterReplicaLogDirsRequest)
	var order []storage.TopicPartition
	dirOf := map[storage.TopicPartition]string{}
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				tp := storage.TopicPartition{Topic: t.Topic, Partition: p}
				if _, ok := dirOf[tp]; !ok {
					order = append(order, tp)
				}
				dirOf[tp] = d.Dir
			}
		}
	}
	authorized := b.authorizeCluster(rc, acl.OpAlter) // Kafka's check
	return b.async(func() kmsg.Response {
		resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
		mover, _ := b.Replicas.(LogDirMover)
		topicAt := map[string]int{}
		for _, tp := range order {
			code := kerr.ClusterAuthorizationFailed.Code
			if authorized {
				code = kerr.KafkaStorageError.Code
				if mover != nil {
					kerrv, msg := mover.AlterLogDir(tp, dirOf[tp], alterLogDirTimeout)
					code = 0
					if kerrv != nil {
						code = kerrv.Code
						b.Log.Warn("unable to alter log dirs", zap.Stringer("partition", tp), zap.String("dir", dirOf[tp]), zap.String("error", kerrv.Message), zap.String("reason", msg))
					}
				}
			}
			i, ok := topicAt[tp.Topic]
			if !ok {
				i = len(resp.Topics)
				topicAt[tp.Topic] = i
				t := kmsg.NewAlterReplicaLogDirsResponseTopic()
				t.Topic = tp.Topic
				resp.Topics = append(resp.Topics, t)
			}
			p := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
			p.Partition, p.ErrorCode = tp.Partition, code
			resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, p)
		}
		return resp
	})
}
