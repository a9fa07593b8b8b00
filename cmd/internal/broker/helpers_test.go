package broker

import (
	"fmt"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"gregor/config"
)

// configOnFreePort parses props with a PLAINTEXT listener on a free
// loopback port (advertised as such, so clients can follow the metadata)
// and returns the config and the port.
func configOnFreePort(t *testing.T, props map[string]string) (*config.Broker, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	props["listeners"] = fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port)
	cfg, err := config.Parse(props, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return cfg, port
}

// withBroker starts a broker from cfg, runs fn with a client of it, then
// closes both (a failed Close fails t). Tests call it several times with
// one cfg to restart a broker on the same log dirs.
func withBroker(t *testing.T, cfg *config.Broker, fn func(cl *kgo.Client)) {
	t.Helper()
	b, err := Start(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()[0].String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fn(cl)
}
