package partition

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage"
)

// maxLogDirNameLen is the longest directory name AlterReplicaLogDirs can
// create (a file name component; Kafka's check, KAFKA-4893).
const maxLogDirNameLen = 255

// AlterLogDir moves tp's log to the log dir named by its absolute path
// (AlterReplicaLogDirs, API 34), as Kafka's ReplicaManager.alterReplicaLogDirs:
//
//   - INVALID_TOPIC_EXCEPTION when the future dir name would pass 255 bytes;
//   - LOG_DIR_NOT_FOUND when dir is not one of log.dirs (by absolute path);
//   - KAFKA_STORAGE_ERROR when dir, another log dir, or the partition is
//     offline;
//   - REPLICA_NOT_AVAILABLE when tp is not hosted here: dir is recorded,
//     and a later LeaderAndIsr creates the log there;
//   - nil when the log is in dir already (a move to another dir is then
//     cancelled), a move to dir is under way, or the future log was
//     created in dir and the copy started.
//
// It waits for the partition actor at most timeout (REQUEST_TIMED_OUT).
// The error message is for the broker's log (Kafka warns with it).
func (m *Manager) AlterLogDir(tp TopicPartition, dir string, timeout time.Duration) (*kerr.Error, string) {
	if len(storage.FutureDirName(tp)) > maxLogDirNameLen {
		return kerr.InvalidTopicException, "The topic name is too long."
	}
	ss, ok := m.store.(StorageStore)
	if !ok || ss.M == nil {
		return kerr.KafkaStorageError, "this broker's log store cannot move logs"
	}
	configured, err := ss.M.ResolveLogDir(dir)
	switch {
	case errors.Is(err, storage.ErrLogDirNotFound):
		return kerr.LogDirNotFound, err.Error()
	case err != nil:
		return kerr.KafkaStorageError, err.Error()
	}
	h, ok := m.Get(tp)
	if ok && h.View().Err == kerr.KafkaStorageError {
		return kerr.KafkaStorageError, "Partition " + tp.String() + " is offline"
	}
	if !ok || h.PID() == nil {
		ss.M.SetPreferredDir(tp, configured)
		return kerr.ReplicaNotAvailable, "Replica of " + tp.String() + " is not available on this broker; it will be created in " + dir
	}
	done := make(chan *kerr.Error, 1)
	h.root.Send(h.PID(), &alterLogDir{dir: configured, done: done})
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case kerrv := <-done:
		if kerrv == kerr.NotLeaderForPartition {
			// Kafka keeps REPLICA_NOT_AVAILABLE here for compatibility.
			return kerr.ReplicaNotAvailable, "Replica of " + tp.String() + " is not available"
		}
		if kerrv != nil {
			return kerrv, "Unable to alter log dir of " + tp.String()
		}
		return nil, ""
	case <-t.C:
		return kerr.RequestTimedOut, "the partition did not answer in time"
	}
}
