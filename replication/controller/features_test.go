package controller

import (
	"testing"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// TestFeatureZNodeCreatedAndWatched: the elected controller creates
// /feature as a Kafka 3.9 controller does, and every broker's feature
// cache follows the node: its data version as the epoch while enabled,
// -1 once disabled or deleted, the new version once re-created.
func TestFeatureZNodeCreatedAndWatched(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	data, version, err := e.store.Get(zkmeta.FeaturePath)
	if err != nil || string(data) != `{"features":{},"version":2,"status":1}` || version != 0 {
		t.Fatalf("/feature = %s v%d (%v)", data, version, err)
	}
	if f := e.c.Features().Load(); f.Epoch != 0 || len(f.Features) != 0 {
		t.Fatalf("controller's features after failover: %v", f)
	}
	sb := standby(t, e, &minRM{}, nil)
	if f := sb.Features().Load(); f.Epoch != 0 {
		t.Fatalf("standby's features after start: %v", f)
	}
	epochs := func(want int64) func() bool {
		return func() bool { return e.c.Features().Load().Epoch == want && sb.Features().Load().Epoch == want }
	}
	if _, err := e.store.Set(zkmeta.FeaturePath, []byte(`{"features":{},"version":2,"status":0}`), 0); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "both caches cleared by the disabled node", epochs(-1))
	if _, err := e.store.Set(zkmeta.FeaturePath, []byte(`{"features":{},"version":2,"status":1}`), 1); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "both caches at epoch 2", epochs(2))
	// A feature this broker does not support: refused, the cache keeps epoch 2.
	if _, err := e.store.Set(zkmeta.FeaturePath, []byte(`{"features":{"f":{"max_version_level":1}},"version":2,"status":1}`), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Set(zkmeta.FeaturePath, []byte(`{"features":{},"version":2,"status":1}`), 3); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "both caches at epoch 4", epochs(4))
	if err := e.store.Delete(zkmeta.FeaturePath, metastore.AnyVersion); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "both caches cleared by the deletion", epochs(-1))
	if err := e.store.Create(zkmeta.FeaturePath, []byte(`{"features":{},"version":2,"status":1}`), false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "both caches at epoch 0 of the new node", epochs(0))
}

// TestFeatureZNodeEnabledOnFailover: a controller elected over a
// disabled v1 /feature rewrites it enabled, v2, without its features
// (Kafka's enableFeatureVersioning), and the new version is the epoch;
// an enabled v2 node is left as it is.
func TestFeatureZNodeEnabledOnFailover(t *testing.T) {
	e := start(t, t.TempDir(), testConfig())
	if _, err := e.store.Set(zkmeta.FeaturePath, []byte(`{"features":{"f":{"max_version_level":2,"min_version_level":1}},"version":1,"status":0}`), 0); err != nil {
		t.Fatal(err)
	}
	sb := standby(t, e, &minRM{}, nil)
	e.c.Close() // the standby wins /controller
	waitUntil(t, "the standby to take over", func() bool { return sb.Epoch() > 0 })
	data, version, err := e.store.Get(zkmeta.FeaturePath)
	if err != nil || string(data) != `{"features":{},"version":2,"status":1}` || version != 2 {
		t.Fatalf("/feature after failover = %s v%d (%v)", data, version, err)
	}
	waitUntil(t, "the new controller's cache at epoch 2", func() bool { return sb.Features().Load().Epoch == 2 })
}
