package ops

import (
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"gregor/config"
	"gregor/test/harness"
)

// The example cluster configs in deploy/ load without errors or warnings
// about unknown keys, and each broker gets its own id, port and admin port.
func TestDeployConfigsLoad(t *testing.T) {
	seen := map[string]bool{}
	for i, want := range []int32{1, 2, 3} {
		core, logs := observer.New(zap.WarnLevel)
		p := filepath.Join(harness.RepoRoot(), "deploy", "cluster", "server-"+string(rune('1'+i))+".properties")
		b, err := config.Load(p, zap.New(core))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, e := range logs.All() {
			t.Errorf("%s: warning %q %v", p, e.Message, e.ContextMap())
		}
		if b.BrokerID != want || b.ZookeeperConnect == "" || b.AdminListener == "" || b.PidFile == "" || b.LogFormat != "json" {
			t.Errorf("%s: id %d zk %q admin %q pid %q format %q", p, b.BrokerID, b.ZookeeperConnect, b.AdminListener, b.PidFile, b.LogFormat)
		}
		if seen[b.AdminListener] {
			t.Errorf("%s: admin.listener %s shared", p, b.AdminListener)
		}
		seen[b.AdminListener] = true
	}
}
