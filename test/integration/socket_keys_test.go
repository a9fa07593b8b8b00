package integration

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// connections.max.idle.ms on a real broker: a client connection with
// nothing to say for that long is closed by the broker (with the default,
// ten minutes, it would stay open for the whole test), no sooner.
func TestConnectionsMaxIdleClosesIdleClient(t *testing.T) {
	const idle = 1500 * time.Millisecond
	b := harness.StartBroker(t, map[string]string{"connections.max.idle.ms": "1500", "socket.listen.backlog.size": "10"})
	c, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("idle-test")).AppendRequest(nil, req, 1)
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	if _, err := io.CopyN(io.Discard, c, int64(uint32(size[0])<<24|uint32(size[1])<<16|uint32(size[2])<<8|uint32(size[3]))); err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := c.Read(size[:])
	var ne net.Error
	if n != 0 || err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("connection not closed by the broker (read %d, %v)", n, err)
	}
	if took := time.Since(answered); took < idle-100*time.Millisecond {
		t.Fatalf("closed after %v of idleness; connections.max.idle.ms=%v", took, idle)
	}

}
