package zkstore

import (
	"testing"
	"time"

	"gregor/replication/metastore"
)

// BenchmarkSetCAS: one conditional partition-state write (Set with the
// expected version), a round trip to a local ZooKeeper.
func BenchmarkSetCAS(b *testing.B) {
	s := benchStore(b)
	if err := s.Create("/state", []byte(`{"leader":1}`), false); err != nil {
		b.Fatal(err)
	}
	v := int32(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nv, err := s.Set("/state", []byte(`{"leader":1}`), v)
		if err != nil {
			b.Fatal(err)
		}
		v = nv
	}
}

// BenchmarkFencedMulti: the controller's fenced write, a CheckVersion on
// /controller_epoch plus a Set in one multi.
func BenchmarkFencedMulti(b *testing.B) {
	s := benchStore(b)
	if err := s.Create("/controller_epoch", []byte("1"), false); err != nil {
		b.Fatal(err)
	}
	if err := s.Create("/state", []byte(`{"leader":1}`), false); err != nil {
		b.Fatal(err)
	}
	v := int32(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := s.Multi(&metastore.CheckVersionOp{Path: "/controller_epoch", Version: 0},
			&metastore.SetOp{Path: "/state", Data: []byte(`{"leader":1}`), Version: v})
		if err != nil {
			b.Fatal(err)
		}
		v = res[1].Version
	}
}

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(server(b).Addr()+freshChroot(), Config{SessionTimeout: 4 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
