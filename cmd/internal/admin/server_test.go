package admin

import (
	"net"
	"testing"
)

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
