package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"gregor/storage/checkpoint"
	"gregor/storage/segment"
)

// CleanShutdownFile is the marker Kafka writes in a log dir after a clean
// shutdown; its presence at startup skips recovery.
const CleanShutdownFile = ".kafka_cleanshutdown"

// lockFile is the per-log-dir lock (flock) that keeps two brokers off one dir.
const lockFile = ".lock"

// ErrNoOnlineLogDir: every log dir is offline, so no partition can be created.
var ErrNoOnlineLogDir = errors.New("no online log directory")

// LogManagerConfig configures a LogManager. Plain value, read once by
// NewLogManager.
type LogManagerConfig struct {
	// Dirs: log.dirs; each holds <topic>-<partition> directories.
	Dirs []string
	// Defaults: the broker-wide LogConfig for logs found at startup (the
	// partition layer applies topic overrides with SetConfig / GetOrCreate).
	Defaults LogConfig
	// RecoveryThreadsPerDir: num.recovery.threads.per.data.dir (default 1);
	// logs of one dir are opened with at most this many goroutines.
	RecoveryThreadsPerDir int
	// Logger; nil = no logging.
	Logger *zap.Logger
	// SegmentFileCacheSize: log.segment.fd.cache.size (Gregor's key): at
	// most this many segments of all logs keep their .log descriptor and
	// index mappings open when not in use (see segment.FileCache); <= 0 =
	// segment.AutoFileCacheLimit() (half the open-file limit).
	SegmentFileCacheSize int
}

// LogManager owns every partition log of the broker across its log dirs:
// opening and recovering them at startup, creating and deleting them, the
// per-dir checkpoint files, and the retention and flush passes.
//
// Thread-safety: all methods are safe for concurrent use.
type LogManager struct {
	cfg    LogManagerConfig
	logger *zap.Logger

	mu      sync.Mutex
	logs    map[TopicPartition]*Log
	parent  map[TopicPartition]string // log dir holding each log
	online  []string
	offline map[string]error
	hwRead  map[TopicPartition]int64
	hw      map[TopicPartition]int64
	locks   map[string]*os.File
	closed  bool
	// creating holds the logs GetOrCreate is creating, outside mu (the
	// files and the dir fsync take a while, and a broker given thousands
	// of new partitions at once creates them in parallel).
	creating map[TopicPartition]*creation

	ckptMu sync.Mutex // serializes checkpoint file writes

	cleaner cleanerState
	files   *segment.FileCache

	// future holds the future replicas (AlterReplicaLogDirs: a partition's
	// copy being built in another log dir, manager_future.go), futureParent
	// their log dirs; preferred the log dir an AlterReplicaLogDirs chose
	// for a partition not hosted yet (GetOrCreate creates it there).
	// moveMu serializes creating, dropping and swapping future replicas
	// with Delete and Reopen (they rename and close the same directories);
	// bg counts the goroutines removing swapped-out directories (Close
	// waits for them).
	future       map[TopicPartition]*Log
	futureParent map[TopicPartition]string
	preferred    map[TopicPartition]string
	moveMu       sync.Mutex
	bg           sync.WaitGroup
}

// dirLoad is what opening one log dir produced.
type dirLoad struct {
	dir     string
	logs    []*Log
	futures []*Log // "<tp>.<id>-future" directories
	hw      map[TopicPartition]int64
	lock    *os.File
	err     error
}

// NewLogManager opens every <topic>-<partition> directory in every log dir,
// in parallel (one goroutine per dir, RecoveryThreadsPerDir per dir for the
// logs), recovering logs after an unclean shutdown (no .kafka_cleanshutdown
// marker). Leftover "<tp>.<id>-delete" directories are removed;
// "<tp>.<id>-future" ones are opened as future replicas (the partition
// layer resumes their move, see manager_future.go), and one whose current
// log is gone — a crash between the two renames of a swap — becomes the
// current log. A dir that
// cannot be created, locked, read or whose logs cannot be opened is marked
// offline (see OfflineDirs) and the others keep working.
//
// Errors: two copies of one partition in different dirs (Kafka refuses to
// start); no dirs configured.
func NewLogManager(cfg LogManagerConfig) (*LogManager, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("log manager: no log dirs")
	}
	if cfg.RecoveryThreadsPerDir < 1 {
		cfg.RecoveryThreadsPerDir = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.SegmentFileCacheSize <= 0 {
		cfg.SegmentFileCacheSize = segment.AutoFileCacheLimit()
	} else if auto := segment.AutoFileCacheLimit(); cfg.SegmentFileCacheSize > 2*auto {
		cfg.Logger.Warn("log.segment.fd.cache.size exceeds the open-file limit: the broker may run out of descriptors before the cache bounds them",
			zap.Int("log.segment.fd.cache.size", cfg.SegmentFileCacheSize), zap.Int("open_file_limit", 2*auto))
	}
	files, err := segment.NewFileCache(cfg.SegmentFileCacheSize)
	if err != nil {
		return nil, fmt.Errorf("log manager: %w", err)
	}
	m := &LogManager{
		files: files,
		cfg:   cfg, logger: cfg.Logger,
		logs: map[TopicPartition]*Log{}, parent: map[TopicPartition]string{}, creating: map[TopicPartition]*creation{},
		offline: map[string]error{}, hwRead: map[TopicPartition]int64{}, hw: map[TopicPartition]int64{},
		locks:  map[string]*os.File{},
		future: map[TopicPartition]*Log{}, futureParent: map[TopicPartition]string{}, preferred: map[TopicPartition]string{},
		cleaner: cleanerState{throttle: newCleanerThrottle()},
	}
	loads := make([]dirLoad, len(cfg.Dirs))
	var wg sync.WaitGroup
	for i, d := range cfg.Dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loads[i] = m.loadDir(d)
		}()
	}
	wg.Wait()
	var dup error
	for _, ld := range loads {
		if ld.err != nil {
			m.offline[ld.dir] = ld.err
			m.logger.Error("log dir offline", zap.String("dir", ld.dir), zap.Error(ld.err))
			continue
		}
		m.online = append(m.online, ld.dir)
		m.locks[ld.dir] = ld.lock
		for _, l := range ld.logs {
			tp := l.TopicPartition()
			if other, ok := m.parent[tp]; ok && dup == nil {
				dup = fmt.Errorf("log manager: duplicate log directories for %s: %s and %s", tp, other, ld.dir)
			}
			m.logs[tp] = l
			m.parent[tp] = ld.dir
		}
		for tp, hw := range ld.hw {
			m.hwRead[tp] = hw
			m.hw[tp] = hw
		}
	}
	if dup == nil {
		dup = m.adoptFutures(loads)
	}
	if dup != nil {
		for _, ld := range loads {
			for _, l := range ld.logs {
				l.Close()
			}
			for _, l := range ld.futures {
				l.Close()
			}
		}
		m.unlockAll()
		return nil, dup
	}
	for tp, hw := range m.hw {
		if l, ok := m.logs[tp]; ok {
			l.SetHighWatermark(hw)
		}
	}
	// The last stable offset is not checkpointed: until the partition
	// actor has rebuilt its producer state and published it, a log found
	// on disk may hold undecided transactions anywhere below its high
	// watermark, so the cleaner must not touch it (Kafka's cleaner reads
	// the LSO of a log whose producer state was loaded at open).
	for _, l := range m.logs {
		l.SetLastStableOffset(l.LogStartOffset())
	}
	return m, nil
}

// loadDir opens one log dir: lock, checkpoints, partition logs.
func (m *LogManager) loadDir(dir string) dirLoad {
	ld := dirLoad{dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		ld.err = fmt.Errorf("create log dir: %w", err)
		return ld
	}
	lf, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		ld.err = fmt.Errorf("open lock file: %w", err)
		return ld
	}
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lf.Close()
		ld.err = fmt.Errorf("log dir %s is locked by another process: %w", dir, err)
		return ld
	}
	ld.lock = lf
	fail := func(err error) dirLoad {
		for _, l := range ld.logs {
			l.Close()
		}
		for _, l := range ld.futures {
			l.Close()
		}
		ld.logs, ld.futures = nil, nil
		lf.Close()
		ld.lock = nil
		ld.err = err
		return ld
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fail(fmt.Errorf("read log dir: %w", err))
	}
	_, statErr := os.Stat(filepath.Join(dir, CleanShutdownFile))
	clean := statErr == nil
	rp := m.readOffsets(dir, checkpoint.RecoveryPointFile)
	ls := m.readOffsets(dir, checkpoint.LogStartOffsetFile)
	ld.hw = m.readOffsets(dir, checkpoint.ReplicationFile)

	var names, futures []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		n := e.Name()
		switch {
		case strings.HasSuffix(n, "-delete"):
			if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
				m.logger.Warn("removing deleted partition dir", zap.String("dir", n), zap.Error(err))
			}
			continue
		case strings.HasSuffix(n, futureSuffix):
			if _, err := parseLogDirName(n); err != nil {
				m.logger.Warn("skipping non-partition directory", zap.String("log_dir", dir), zap.String("name", n))
			} else {
				futures = append(futures, n)
			}
			continue
		case strings.HasSuffix(n, "-stray"):
			continue
		}
		if _, err := ParseTopicPartition(n); err != nil {
			m.logger.Warn("skipping non-partition directory", zap.String("log_dir", dir), zap.String("name", n))
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	sort.Strings(futures)
	nCurrent := len(names)
	names = append(names, futures...) // opened alike; split below

	logs := make([]*Log, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, m.cfg.RecoveryThreadsPerDir)
	var wg sync.WaitGroup
	for i, n := range names {
		tp, _ := parseLogDirName(n)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			logs[i], errs[i] = OpenLog(filepath.Join(dir, n), m.cfg.Defaults, OpenOptions{
				RecoveryPoint:  rp[tp],
				LogStartOffset: ls[tp],
				CleanShutdown:  clean,
				Logger:         m.logger,
				FileCache:      m.files,
				// Recovered segments are synced by one syncfs below.
				DeferRecoverySync: true,
			})
		}()
	}
	wg.Wait()
	ld.futures = compact(slices.Clone(logs[nCurrent:]))
	ld.logs = compact(logs[:nCurrent])
	for i, err := range errs {
		if err != nil {
			return fail(fmt.Errorf("open %s: %w", names[i], err))
		}
	}
	if !clean {
		// What recovery rebuilt and truncated (DeferRecoverySync), in one
		// sweep, before the recovery points at the log ends can be
		// checkpointed.
		if err := syncFS(dir); err != nil {
			return fail(err)
		}
	}
	if clean {
		if err := os.Remove(filepath.Join(dir, CleanShutdownFile)); err != nil {
			return fail(fmt.Errorf("remove clean shutdown marker: %w", err))
		}
		if err := checkpoint.SyncDir(dir); err != nil {
			return fail(err)
		}
	}
	return ld
}

func compact(ls []*Log) []*Log {
	out := ls[:0]
	for _, l := range ls {
		if l != nil {
			out = append(out, l)
		}
	}
	return out
}

// readOffsets reads one offset checkpoint of dir as a map; a missing file is
// empty, an unreadable one is logged and treated as empty (which only costs
// a longer recovery).
func (m *LogManager) readOffsets(dir, name string) map[TopicPartition]int64 {
	out := map[TopicPartition]int64{}
	es, err := checkpoint.ReadOffsets(filepath.Join(dir, name))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.logger.Warn("ignoring unreadable checkpoint", zap.String("log_dir", dir), zap.String("file", name), zap.Error(err))
		}
		return out
	}
	for _, e := range es {
		out[TopicPartition{Topic: e.Topic, Partition: e.Partition}] = e.Offset
	}
	return out
}

func (m *LogManager) unlockAll() {
	for d, f := range m.locks {
		f.Close()
		delete(m.locks, d)
	}
}

// FileCacheStats reports the segment file cache shared by the manager's
// logs (open descriptors, opens, evictions; for metrics and tests).
func (m *LogManager) FileCacheStats() segment.FileCacheStats { return m.files.Stats() }
