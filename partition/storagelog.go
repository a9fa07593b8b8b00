package partition

import (
	"fmt"
	"time"

	"gregor/storage"
)

// StorageLog adapts a *storage.Log to Log.
type StorageLog struct{ *storage.Log }

var _ Log = StorageLog{}

// Append converts the options and appends (see storage.Log.Append).
func (s StorageLog) Append(batch []byte, opts AppendOptions) (storage.AppendInfo, error) {
	return s.Log.Append(batch, storage.AppendOptions{LeaderEpoch: opts.LeaderEpoch, LogAppendTime: opts.LogAppendTime, PreValidated: opts.PreValidated})
}

// EndOffsetForEpoch asks the log's leader-epoch cache (KIP-101/279).
func (s StorageLog) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return s.Log.LeaderEpochs().EndOffsetForEpoch(epoch)
}

// StorageStore adapts a *storage.LogManager to LogStore.
type StorageStore struct{ M *storage.LogManager }

var _ LogStore = StorageStore{}

// GetOrCreate implements LogStore.
func (s StorageStore) GetOrCreate(tp TopicPartition, cfg storage.LogConfig) (Log, error) {
	l, err := s.M.GetOrCreate(tp, cfg)
	if err != nil {
		return nil, err
	}
	return StorageLog{l}, nil
}

// reopener is LogManager.Reopen from the agreed API; used when present.
type reopener interface {
	Reopen(tp TopicPartition) (*storage.Log, error)
}

// Reopen implements LogStore with LogManager.Reopen (recovery from the
// recovery point). Until the storage side provides it, the open log is
// reused as is (no recovery on actor restart).
func (s StorageStore) Reopen(tp TopicPartition) (Log, error) {
	if r, ok := any(s.M).(reopener); ok {
		l, err := r.Reopen(tp)
		if err != nil {
			return nil, err
		}
		return StorageLog{l}, nil
	}
	l, ok := s.M.Get(tp)
	if !ok {
		return nil, fmt.Errorf("reopen %s: %w", tp, storage.ErrLogClosed)
	}
	return StorageLog{l}, nil
}

func (s StorageStore) Delete(tp TopicPartition) error { return s.M.Delete(tp) }
func (s StorageStore) HighWatermarks() map[TopicPartition]int64 {
	return s.M.HighWatermarks()
}
func (s StorageStore) CheckpointHighWatermarks(hw map[TopicPartition]int64) error {
	return s.M.CheckpointHighWatermarks(hw)
}
func (s StorageStore) CheckpointRecoveryPoints() error  { return s.M.CheckpointRecoveryPoints() }
func (s StorageStore) CheckpointLogStartOffsets() error { return s.M.CheckpointLogStartOffsets() }
func (s StorageStore) RetentionPass(now time.Time) (int, error) {
	return s.M.RetentionPass(now)
}
func (s StorageStore) FlushPass(now time.Time) error { return s.M.FlushPass(now) }

var _ FollowerLog = StorageLog{}

// LatestEpoch is the newest entry of the log's leader-epoch cache.
func (s StorageLog) LatestEpoch() (int32, bool) { return s.Log.LeaderEpochs().Latest() }
