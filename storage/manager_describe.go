package storage

import (
	"math"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

// DirDescription is one log dir as DescribeLogDirs (API 35) reports it.
type DirDescription struct {
	// Dir is the log dir's absolute path (Kafka reports
	// Paths.get(dir).toAbsolutePath).
	Dir string
	// Err is why the dir is offline (KAFKA_STORAGE_ERROR), or why its
	// filesystem could not be read; nil for a healthy dir.
	Err error
	// Offline is set when the dir is out of service (Err says why);
	// otherwise a non-nil Err is the statfs failure.
	Offline bool
	// TotalBytes and UsableBytes are the dir's filesystem size and the
	// bytes an unprivileged process may still write (statfs f_blocks and
	// f_bavail times f_bsize, as Java's FileStore.getTotalSpace and
	// getUsableSpace); 0 when Err is set.
	TotalBytes, UsableBytes int64
	// Replicas are the partition logs the dir holds, sorted by topic and
	// partition.
	Replicas []ReplicaDescription
}

// ReplicaDescription is one partition log of a DirDescription.
type ReplicaDescription struct {
	TP TopicPartition
	// Size is the bytes of the log's segment files (Log.Size).
	Size int64
	// OffsetLag is, for the current replica, max(high watermark - log end
	// offset, 0): how far its log is behind what is committed; for a
	// future replica, max(current log end offset - future log end offset,
	// 0): how far the copy is behind (Kafka's getLogEndOffsetLag).
	OffsetLag int64
	// IsFuture marks a future replica: the copy AlterReplicaLogDirs is
	// building in this dir (DescribeLogDirs is_future).
	IsFuture bool
}

// DescribeDirs describes every configured log dir (log.dirs, each once,
// in configured order): online dirs with their filesystem's space and
// the logs they hold, offline dirs with their error. It reads each dir's
// filesystem with statfs, so it does a little I/O; it never blocks on
// other callers beyond the manager's lock.
func (m *LogManager) DescribeDirs() []DirDescription {
	type logInfo struct {
		tp      TopicPartition
		l       *Log
		size    int64
		leo, hw int64
		dir     string
		future  bool
	}
	m.mu.Lock()
	online := map[string]bool{}
	for _, d := range m.online {
		online[d] = true
	}
	offline := make(map[string]error, len(m.offline))
	for d, e := range m.offline {
		offline[d] = e
	}
	logs := make([]logInfo, 0, len(m.logs))
	for tp, l := range m.logs {
		logs = append(logs, logInfo{tp: tp, dir: m.parent[tp], l: l})
	}
	futures := make([]logInfo, 0, len(m.future))
	for tp, l := range m.future {
		if cur, ok := m.logs[tp]; ok {
			// hw holds the current log's end: the future's lag is behind it.
			futures = append(futures, logInfo{tp: tp, dir: m.futureParent[tp], l: l, future: true, hw: cur.LogEndOffset()})
		}
	}
	m.mu.Unlock()
	// Sizes are read outside the lock: they walk segment lists.
	for i := range logs {
		l := logs[i].l
		logs[i].size, logs[i].leo, logs[i].hw = l.Size(), l.LogEndOffset(), l.hw.Load()
	}
	for i := range futures {
		futures[i].size, futures[i].leo = futures[i].l.Size(), futures[i].l.LogEndOffset()
	}
	logs = append(logs, futures...)
	sort.Slice(logs, func(i, j int) bool {
		a, b := logs[i].tp, logs[j].tp
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return !logs[i].future && logs[j].future
	})
	seen := map[string]bool{}
	var out []DirDescription
	for _, d := range m.cfg.Dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		abs, err := filepath.Abs(d)
		if err != nil {
			abs = d
		}
		desc := DirDescription{Dir: abs}
		switch {
		case offline[d] != nil:
			desc.Err, desc.Offline = offline[d], true
		case !online[d]:
			desc.Err, desc.Offline = ErrNoOnlineLogDir, true
		default:
			var st unix.Statfs_t
			if err := unix.Statfs(d, &st); err != nil {
				desc.Err = err
				break
			}
			desc.TotalBytes = clampSpace(st.Blocks, uint64(st.Bsize))
			desc.UsableBytes = clampSpace(st.Bavail, uint64(st.Bsize))
			for _, li := range logs {
				if li.dir != d {
					continue
				}
				desc.Replicas = append(desc.Replicas, ReplicaDescription{TP: li.tp, Size: li.size, OffsetLag: max(li.hw-li.leo, 0), IsFuture: li.future})
			}
		}
		out = append(out, desc)
	}
	return out
}

// clampSpace is blocks*size, or MaxInt64 when that overflows (Kafka's
// adjustForLargeFileSystems answers Long.MAX_VALUE for the same case).
func clampSpace(blocks, size uint64) int64 {
	if size != 0 && blocks > math.MaxInt64/size {
		return math.MaxInt64
	}
	return int64(blocks * size)
}
