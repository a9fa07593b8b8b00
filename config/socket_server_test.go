package config

import (
	"strings"
	"testing"
)

// KafkaConfig.validateValues' rules for the socket server keys, with its messages.
func TestSocketServerKeysValidation(t *testing.T) {
	for _, c := range []struct {
		kv   map[string]string
		want string // "" = accepted
	}{
		{map[string]string{"queued.max.request.bytes": "1000"}, "queued.max.request.bytes must be larger or equal to socket.request.max.bytes"},
		{map[string]string{"queued.max.request.bytes": "1000", "socket.request.max.bytes": "1000"}, ""},
		{map[string]string{"queued.max.request.bytes": "0"}, ""},
		{map[string]string{"connections.max.idle.ms": "100"}, "connection.failed.authentication.delay.ms=100 should always be less than connections.max.idle.ms=100 to prevent failed authentication responses from timing out"},
		{map[string]string{"connections.max.idle.ms": "0", "connection.failed.authentication.delay.ms": "0"}, "should always be less than connections.max.idle.ms=0"},
		{map[string]string{"connections.max.idle.ms": "-1", "connection.failed.authentication.delay.ms": "5000"}, ""},
		{map[string]string{"connection.failed.authentication.delay.ms": "-1"}, "Value must be at least 0"},
		{map[string]string{"socket.listen.backlog.size": "0"}, "Value must be at least 1"},
		{map[string]string{"connections.max.idle.ms": "9223372036854775807"}, ""},
	} {
		_, err := Parse(c.kv, nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.kv, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: got %v, want %q", c.kv, err, c.want)
		}
	}
	b, err := Parse(map[string]string{"connections.max.idle.ms": "9223372036854775807"}, nil)
	if err != nil || b.SocketServer.ConnectionsMaxIdle <= 0 {
		t.Fatalf("huge idle: %v %v", b.SocketServer.ConnectionsMaxIdle, err)
	}
	for _, k := range []string{"connections.max.idle.ms", "connection.failed.authentication.delay.ms", "socket.listen.backlog.size", "queued.max.request.bytes"} {
		if _, ok := ignoredKeys[k]; ok {
			t.Errorf("%s still listed as ignored", k)
		}
	}
}
