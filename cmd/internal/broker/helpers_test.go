package broker

import (
	"fmt"
	"net"
	"testing"

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
