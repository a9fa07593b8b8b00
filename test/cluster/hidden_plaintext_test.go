package cluster

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// hiddenPlaintext makes every broker advertise its PLAINTEXT listener (the
// harness's, which the test's own clients use) at a port nothing listens
// on; only the test's clients map it back to the real port, in their
// dialer. A broker-to-broker connection — controller channel, follower
// fetches, controlled shutdown — can then only have gone to another
// listener: the one under test.
type hiddenPlaintext struct {
	bogus map[int32]int     // broker id → its advertised, unreachable PLAINTEXT port
	real  map[string]string // unreachable address → the broker's real PLAINTEXT address
}

func newHiddenPlaintext() *hiddenPlaintext {
	return &hiddenPlaintext{bogus: map[int32]int{}, real: map[string]string{}}
}

// advertise returns broker id's advertised PLAINTEXT endpoint (for its
// advertised.listeners); call it from startClusterEach's per-broker func.
func (h *hiddenPlaintext) advertise(t *testing.T, id int32) string {
	h.bogus[id] = harness.FreePort(t)
	return fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", h.bogus[id])
}

// install points the test's clients (c.clientOpts) at the real ports,
// once the brokers run; the map is only read after this.
func (h *hiddenPlaintext) install(c *cluster) {
	for id, b := range c.brokers {
		h.real[fmt.Sprintf("127.0.0.1:%d", h.bogus[id])] = b.Addr()
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	c.clientOpts = append(c.clientOpts, kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
		if real, ok := h.real[host]; ok {
			host = real
		}
		return d.DialContext(ctx, network, host)
	}))
}
