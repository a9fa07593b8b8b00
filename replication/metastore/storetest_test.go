package metastore_test

import (
	"testing"

	"gregor/replication/metastore"
	"gregor/replication/metastore/storetest"
)

func TestEmbeddedConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) metastore.Store {
		s, err := metastore.OpenEmbeddedDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) metastore.Store {
		s := metastore.NewMemory().Open()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// memSessions drives the session cases over one Memory ensemble.
type memSessions struct{ m *metastore.Memory }

func (x memSessions) Open(t *testing.T) metastore.Store {
	s := x.m.Open()
	t.Cleanup(func() { s.Close() })
	return s
}

func (memSessions) Expire(t *testing.T, s metastore.Store) { s.(*metastore.MemorySession).Expire() }
func (memSessions) Disconnect(t *testing.T, s metastore.Store) {
	s.(*metastore.MemorySession).Disconnect()
}
func (memSessions) Reconnect(t *testing.T, s metastore.Store) {
	s.(*metastore.MemorySession).Reconnect()
}

func TestMemorySessionConformance(t *testing.T) {
	storetest.RunSessions(t, func(t *testing.T) storetest.Sessions { return memSessions{metastore.NewMemory()} })
}
