// Package checkpoint reads and writes Kafka's small text state files:
// the per-log-dir offset checkpoints (recovery-point-offset-checkpoint,
// log-start-offset-checkpoint, replication-offset-checkpoint), the
// per-partition leader-epoch-checkpoint and partition.metadata, and the
// per-log-dir meta.properties. Every write is atomic: a temp file is
// written, fsynced and renamed over the target, then the directory is
// fsynced, so a crash leaves either the old or the new content.
//
// Thread-safety: the functions hold no shared state; concurrent writers of
// the SAME path must be serialized by the caller (they share the temp name).
package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data: write path+".tmp", fsync it,
// rename it over path, fsync the parent directory (Kafka's
// CheckpointFile.write). Errors are returned wrapped with the path; on error
// the temp file is removed and path keeps its old content.
func WriteFileAtomic(path string, data []byte) (err error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("checkpoint %s: write: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("checkpoint %s: fsync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("checkpoint %s: close: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("checkpoint %s: rename: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory so that renames and creations inside it are
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}

// FormatError reports a checkpoint file whose content does not parse.
// Line is 1-based; 0 means the file as a whole. Immutable once returned.
type FormatError struct {
	Path   string
	Line   int
	Reason string
}

func (e *FormatError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("malformed checkpoint %s: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("malformed checkpoint %s line %d: %s", e.Path, e.Line, e.Reason)
}
