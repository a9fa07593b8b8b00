package storage

import (
	"bytes"
	"path/filepath"
	"testing"

	"gregor/storage/internal/kgocapture"
	"gregor/storage/record"
)

// FuzzAppend: arbitrary bytes given to Append and AppendAsFollower never
// panic, and a rejected input leaves the log unchanged. Seeds: batches a
// real kgo producer sent to kfake (every codec, idempotent; kgocapture) and
// kmsg-encoded batches, whole, cut short and with a flipped bit.
func FuzzAppend(f *testing.F) {
	for _, b := range kgocapture.Batches(f) {
		f.Add(bytes.Clone(b.Bytes))
	}
	good := makeBatch(f, batchSpec{n: 3, valueSize: 8})
	f.Add(good)
	f.Add(good[:40])
	flipped := append([]byte(nil), good...)
	flipped[70] ^= 1
	f.Add(flipped)
	gz := makeBatch(f, batchSpec{n: 2, valueSize: 50, codec: record.CodecGzip})
	f.Add(gz)
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg := testConfig()
		l := openTestLog(t, filepath.Join(t.TempDir(), "f-0"), cfg, OpenOptions{})
		defer l.Close()
		in := append([]byte(nil), b...)
		if _, err := l.Append(in, AppendOptions{LeaderEpoch: 1, LogAppendTime: -1}); err != nil && (l.LogEndOffset() != 0 || l.Size() != 0) {
			t.Fatalf("rejected append changed the log: %v", err)
		}
		leo, size := l.LogEndOffset(), l.Size()
		if _, err := l.AppendAsFollower(append([]byte(nil), b...)); err != nil && (l.LogEndOffset() != leo || l.Size() != size) {
			t.Fatalf("rejected follower append changed the log: %v", err)
		}
		if fd, err := l.Read(0, 1<<20, l.LogEndOffset()); err == nil {
			splitBatches(t, readAll(t, fd))
		}
	})
}
