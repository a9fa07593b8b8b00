package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDaemonKeys(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "server.properties")
		if err := os.WriteFile(p, []byte("log.dirs="+dir+"\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b, _ := mustLoad(t, write("pid.file=/run/gregor/gregor.pid\nlog.format=json\n"))
	if b.PidFile != "/run/gregor/gregor.pid" || b.LogFormat != "json" {
		t.Errorf("pid.file %q log.format %q", b.PidFile, b.LogFormat)
	}
	b, _ = mustLoad(t, write(""))
	if b.PidFile != "" || b.LogFormat != "" {
		t.Errorf("defaults: pid.file %q log.format %q, want both empty (no pid file, console)", b.PidFile, b.LogFormat)
	}
	if _, err := Load(write("log.format=xml\n"), nil); err == nil || !strings.Contains(err.Error(), "log.format") {
		t.Errorf("log.format=xml: %v, want an error naming the key", err)
	}
}
