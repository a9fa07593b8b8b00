package controller

import (
	"testing"
	"time"

	"gregor/replication/metastore"
	"gregor/replication/usercreds"
)

// TestUserConfigChangeHook: a "users/<u>" notification reaches
// Options.OnUserConfigChange (sanitized name) on a running controller;
// topic notifications and user/client quota paths do not.
func TestUserConfigChangeHook(t *testing.T) {
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	c := New(s, &fakeRM{}, testConfig(), Options{OnUserConfigChange: func(u string) { got <- u }})
	if err := c.Start(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	e := &env{store: s, c: c}
	t.Cleanup(e.stop)
	if err := usercreds.Update(s, "a b", func(cfg map[string]string) error { cfg["SCRAM-SHA-256"] = "x"; return nil }); err != nil {
		t.Fatal(err)
	}
	next := func() string {
		select {
		case u := <-got:
			return u
		case <-time.After(10 * time.Second):
			t.Fatal("no user change reported")
		}
		return ""
	}
	if u := next(); u != "a%20b" {
		t.Fatalf("hook got %q", u)
	}
	if err := usercreds.Notify(s, "bob"); err != nil {
		t.Fatal(err)
	}
	if u := next(); u != "bob" {
		t.Fatalf("hook got %q", u)
	}
}
