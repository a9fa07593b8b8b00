package server

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
)

// apiVersionsOK reports whether the client's ApiVersions round trip works.
func apiVersionsOK(t *testing.T, c *rawClient) {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "t", "1"
	if resp := c.roundTrip(req).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 {
		t.Fatalf("ApiVersions: error %d", resp.ErrorCode)
	}
}

// TestConnectionLimits: a connection past max.connections.per.ip, its
// override, or max.connections is closed at accept and counted; the
// connections already open keep working, and a place freed by a close
// is given to the next connection.
func TestConnectionLimits(t *testing.T) {
	for _, c := range []struct {
		name   string
		limits config.ConnectionLimits
		allow  int
		key    string
	}{
		{"per ip", config.ConnectionLimits{Max: config.Unlimited, PerIP: 2, CreationRate: config.Unlimited}, 2, "max.connections.per.ip"},
		{"override", config.ConnectionLimits{Max: config.Unlimited, PerIP: 0, PerIPOverrides: map[string]int{"127.0.0.1": 3}, CreationRate: config.Unlimited}, 3, "max.connections.per.ip.overrides"},
		{"broker-wide", config.ConnectionLimits{Max: 1, PerIP: config.Unlimited, CreationRate: config.Unlimited}, 1, "max.connections"},
		{"creation rate", config.ConnectionLimits{Max: config.Unlimited, PerIP: config.Unlimited, CreationRate: 2}, 2, "max.connection.creation.rate"},
		{"listener", config.ConnectionLimits{Max: config.Unlimited, PerIP: config.Unlimited, CreationRate: config.Unlimited,
			PerListener: map[string]config.ListenerConnectionLimits{"PLAINTEXT": {Max: 2, CreationRate: config.Unlimited}}}, 2, "listener.name.plaintext.max.connections"},
		{"listener creation rate", config.ConnectionLimits{Max: config.Unlimited, PerIP: config.Unlimited, CreationRate: config.Unlimited,
			PerListener: map[string]config.ListenerConnectionLimits{"PLAINTEXT": {Max: config.Unlimited, CreationRate: 3}}}, 3, "listener.name.plaintext.max.connection.creation.rate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			limits := c.limits
			e := startServer(t, func(cfg *Config) { cfg.Limits = &limits })
			var open []*rawClient
			for i := 0; i < c.allow; i++ {
				cl := dialRaw(t, e.addr)
				apiVersionsOK(t, cl)
				open = append(open, cl)
			}
			extra := dialRaw(t, e.addr)
			extra.expectClosed()
			if n := e.srv.Stats.ConnectionsRefused.Load(); n != 1 {
				t.Fatalf("ConnectionsRefused = %d, want 1", n)
			}
			waitFor(t, "the refusal logged", func() bool { return e.logged("connection refused: limit reached") })
			for _, l := range e.logs.All() {
				if l.Message == "connection refused: limit reached" && l.ContextMap()["limit"] != c.key {
					t.Fatalf("refused by %v, want %s", l.ContextMap()["limit"], c.key)
				}
			}
			for _, cl := range open { // not disturbed
				apiVersionsOK(t, cl)
			}
			if strings.HasSuffix(c.key, "max.connection.creation.rate") {
				return // a freed place does not refill the rate
			}
			open[0].c.Close()
			waitFor(t, "the closed connection forgotten", func() bool { return e.srv.Stats.ConnectionsOpen.Load() == int64(c.allow-1) })
			apiVersionsOK(t, dialRaw(t, e.addr))
		})
	}
}

// TestConnectionLimitsExemptInterBroker: the inter-broker listener's
// connections are let in when max.connections is reached.
func TestConnectionLimitsExemptInterBroker(t *testing.T) {
	limits := config.ConnectionLimits{Max: 0, PerIP: config.Unlimited, CreationRate: config.Unlimited}
	e := startServer(t, func(cfg *Config) { cfg.Limits, cfg.InterBrokerListener = &limits, "PLAINTEXT" })
	apiVersionsOK(t, dialRaw(t, e.addr))
	if n := e.srv.Stats.ConnectionsRefused.Load(); n != 0 {
		t.Fatalf("ConnectionsRefused = %d on the inter-broker listener", n)
	}
}
