package integration

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// TestMalformedFramesCloseOnlyTheirConnection sends garbage, a negative
// length, an oversized length and a truncated frame on separate connections
// while another client keeps producing: each bad connection is closed by the
// broker, and the good client never sees an error.
func TestMalformedFramesCloseOnlyTheirConnection(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"socket.request.max.bytes": "1048576"})
	createTopic(t, b, "steady", 1, nil)
	cl := b.Client(kgo.DefaultProduceTopic("steady"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	frame := func(size int32, body []byte) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(size))
		return append(out, body...)
	}
	cases := map[string][]byte{
		"garbage":   frame(16, []byte("\xff\xff\x00\x07garbage!garbage")),
		"negative":  frame(-5, nil),
		"oversized": frame(64<<20, nil),
		// A header that claims 100 bytes, then the client half-closes.
		"truncated": frame(100, []byte{0, 18, 0, 3, 0, 0, 0, 1}),
	}
	for name, payload := range cases {
		conn, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
		if err != nil {
			t.Fatalf("%s: dial: %v", name, err)
		}
		if _, err := conn.Write(payload); err != nil {
			t.Fatalf("%s: write: %v", name, err)
		}
		if name == "truncated" {
			_ = conn.(*net.TCPConn).CloseWrite()
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(conn)
		conn.Close()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: broker kept the connection open", name)
		}
		// The good client is unaffected, every time.
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(name)}).FirstErr(); err != nil {
			t.Fatalf("after %s: good client failed to produce: %v", name, err)
		}
	}
	got := consumeN(t, b, "steady", len(cases), time.Minute)
	if len(got) != len(cases) {
		t.Fatalf("got %d records, want %d", len(got), len(cases))
	}
}
