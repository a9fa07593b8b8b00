package broker

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"gregor/config"
)

// TestStartFailuresAreErrors: a broker that cannot start (its port is taken)
// returns an error naming the cause and leaves nothing running, rather than
// panicking while it stops what it had started.
func TestStartFailuresAreErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	cfg, err := config.Parse(map[string]string{
		"listeners": fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port),
		"log.dirs":  filepath.Join(t.TempDir(), "data"),
	}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Start(cfg, zap.NewNop())
	if err == nil {
		b.Close()
		t.Fatal("Start succeeded on a port that is in use")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("error %q does not say why", err)
	}
	// The log dir lock was released: a second start on a free port works.
	cfg.Listeners[0].Port = 0
	cfg.AdvertisedListeners = nil
	b, err = Start(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("second start: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}
