package storage

import (
	"errors"
	"path/filepath"
	"testing"
)

// DescribeDirs reports each configured dir, by absolute path, with
// its logs' sizes and the filesystem's space; an offline dir only its
// error.
func TestDescribeDirs(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	m, err := NewLogManager(LogManagerConfig{Dirs: []string{a, b}, Defaults: DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tp := TopicPartition{Topic: "t", Partition: 3}
	l, err := m.GetOrCreate(tp, DefaultLogConfig())
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 1, 3, 100, 1000)
	dirs := m.DescribeDirs()
	if len(dirs) != 2 || dirs[0].Dir != a || dirs[1].Dir != b {
		t.Fatalf("dirs %+v", dirs)
	}
	var found int
	for _, d := range dirs {
		if d.Err != nil || d.TotalBytes <= 0 || d.UsableBytes <= 0 || d.UsableBytes > d.TotalBytes {
			t.Fatalf("dir %+v", d)
		}
		for _, r := range d.Replicas {
			found++
			if r.TP != tp || r.Size != l.Size() || r.Size <= 0 || r.OffsetLag != 0 {
				t.Fatalf("replica %+v, log size %d", r, l.Size())
			}
		}
	}
	if found != 1 {
		t.Fatalf("found %d replicas", found)
	}
	errTest := errors.New("disk gone")
	m.markOffline(b, errTest)
	dirs = m.DescribeDirs()
	if !dirs[1].Offline || dirs[1].Err != errTest || dirs[1].TotalBytes != 0 || filepath.Clean(dirs[1].Dir) != b {
		t.Fatalf("offline dir %+v", dirs[1])
	}
}
