package integration

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// TestConnectionLimitsRealBroker: a broker with max.connections.per.ip=3
// serves three connections from 127.0.0.1, closes the fourth at accept
// (logged and counted on the admin listener; the connections already open
// still answered), and takes a new one once a place is free.
func TestConnectionLimitsRealBroker(t *testing.T) {
	adminPort := harness.FreePort(t)
	b := harness.StartBroker(t, map[string]string{"max.connections.per.ip": "3", "admin.listener": fmt.Sprintf("127.0.0.1:%d", adminPort)})
	apiVersions := func(c net.Conn) error {
		req := kmsg.NewPtrApiVersionsRequest()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)); err != nil {
			return err
		}
		var sz [4]byte
		if _, err := io.ReadFull(c, sz[:]); err != nil {
			return err
		}
		_, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(sz[:])))
		return err
	}
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// The harness's readiness probe may still be closing: wait until three
	// connections are served.
	var open []net.Conn
	deadline := time.Now().Add(20 * time.Second)
	for len(open) < 3 {
		c := dial()
		if err := apiVersions(c); err != nil {
			c.Close()
			if time.Now().After(deadline) {
				t.Fatalf("only %d connections served: %v", len(open), err)
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		open = append(open, c)
	}
	if err := apiVersions(dial()); err == nil {
		t.Fatal("a fourth connection from 127.0.0.1 was served")
	}
	if !strings.Contains(b.Log(), "connection refused: limit reached") || !strings.Contains(b.Log(), "max.connections.per.ip") {
		t.Fatalf("the refusal is not logged:\n%s", b.Log())
	}
	// Counted on the admin listener.
	if n, ok, err := harness.MetricSum(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d", adminPort), "gregor_server_connections_refused_total"); err != nil || !ok || n != 1 {
		t.Fatalf("gregor_server_connections_refused_total = %v (found %v, %v), want 1", n, ok, err)
	}
	for i, c := range open {
		if err := apiVersions(c); err != nil {
			t.Fatalf("open connection %d disturbed: %v", i, err)
		}
	}
	open[0].Close()
	for {
		c := dial()
		if err := apiVersions(c); err == nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("no connection served after one closed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
