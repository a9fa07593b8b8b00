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
