package usercreds

import (
	"testing"
	"time"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/wire/security/sasl"
)

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{"alice": "alice", "a b": "a%20b", "x*y": "x%2Ay", "CN=a,O=b": "CN%3Da%2CO%3Db", "ü": "%C3%BC", "a.b-c_d": "a.b-c_d"} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
		if back, err := Desanitize(want); err != nil || back != in {
			t.Errorf("Desanitize(%q) = %q %v", want, back, err)
		}
	}
}

// TestWatcher: Start loads the users present; Changed re-reads one user
// (new credential, removed credential) without blocking the caller.
func TestWatcher(t *testing.T) {
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, _ := sasl.ScramByName(sasl.ScramSHA256)
	c1, _ := m.NewCredential("one", 4096)
	if err := Update(s, "alice", func(cfg map[string]string) error {
		cfg[sasl.ScramSHA256] = c1.String()
		cfg["producer_byte_rate"] = "1024" // written by Kafka's own tools: not a credential
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	kids, _ := s.Children(zkmeta.ConfigChangesPath)
	if len(kids) != 1 {
		t.Fatalf("notifications %v", kids)
	}
	cache := sasl.NewCredentialCache()
	var w *Watcher
	w, err = Start(s, cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got, ok := cache.Get(sasl.ScramSHA256, "alice"); !ok || got.String() != c1.String() {
		t.Fatal("alice not loaded at start")
	}
	c2, _ := m.NewCredential("two", 8192)
	if err := Update(s, "alice", func(cfg map[string]string) error { cfg[sasl.ScramSHA256] = c2.String(); return nil }); err != nil {
		t.Fatal(err)
	}
	w.Changed("alice")
	waitCache(t, "new credential", func() bool { got, _ := cache.Get(sasl.ScramSHA256, "alice"); return got.Iterations == 8192 })
	if err := Update(s, "alice", func(cfg map[string]string) error { delete(cfg, sasl.ScramSHA256); return nil }); err != nil {
		t.Fatal(err)
	}
	w.Changed("alice")
	waitCache(t, "credential removed", func() bool { _, ok := cache.Get(sasl.ScramSHA256, "alice"); return !ok })
	if data, _, _ := s.Get(UserPath("alice")); string(data) != `{"version":1,"config":{"producer_byte_rate":"1024"}}` {
		t.Fatalf("znode %s", data)
	}
}

func waitCache(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond) // the watcher's goroutine gives no event
	}
}
