package admin

import (
	"net"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestStartWarnsWhenNotLoopback: the listener has no authentication, so
// binding it beyond loopback logs one WARN saying so (and still starts);
// a loopback address logs none.
func TestStartWarnsWhenNotLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		warn bool
	}{
		{"127.0.0.1:0", false},
		{"localhost:0", false},
		{"0.0.0.0:0", true},
		{":0", true},
	} {
		core, logs := observer.New(zapcore.WarnLevel)
		s, err := Start(Options{Addr: tc.addr, Log: zap.New(core)})
		if err != nil {
			t.Fatalf("Start(%q): %v", tc.addr, err)
		}
		s.Close()
		var warns []string
		for _, e := range logs.All() {
			if strings.Contains(e.Message, "no authentication") {
				warns = append(warns, e.Message)
			}
		}
		switch {
		case tc.warn && len(warns) != 1:
			t.Errorf("Start(%q) bound %v: %d authentication warnings, want 1: %v", tc.addr, s.Addr(), len(warns), logs.All())
		case !tc.warn && len(warns) != 0:
			t.Errorf("Start(%q) bound %v: warned %v, want no warning on loopback", tc.addr, s.Addr(), warns)
		}
	}
}

func TestLoopback(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true}, {"127.1.2.3", true}, {"::1", true},
		{"0.0.0.0", false}, {"::", false}, {"10.0.0.1", false}, {"192.168.1.5", false},
	} {
		if got := loopback(&net.TCPAddr{IP: net.ParseIP(tc.ip)}); got != tc.want {
			t.Errorf("loopback(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}
