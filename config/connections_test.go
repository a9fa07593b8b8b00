package config

import (
	"strings"
	"testing"
)

func TestConnectionLimitsConfig(t *testing.T) {
	b, err := Parse(map[string]string{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := b.ConnectionLimits; l.Max != Unlimited || l.PerIP != Unlimited || l.CreationRate != Unlimited || len(l.PerIPOverrides) != 0 {
		t.Fatalf("defaults %+v", l)
	}
	b, err = Parse(map[string]string{"max.connections": "100", "max.connections.per.ip": "0",
		"max.connections.per.ip.overrides": "127.0.0.1:5, [::1]:7,localhost:9", "max.connection.creation.rate": "20"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := b.ConnectionLimits
	if l.Max != 100 || l.PerIP != 0 || l.CreationRate != 20 || l.PerIPOverrides["::1"] != 7 {
		t.Fatalf("%+v", l)
	}
	if n := l.PerIPOverrides["127.0.0.1"]; n != 5 && n != 9 { // localhost resolves to 127.0.0.1 too (the later entry wins)
		t.Fatalf("127.0.0.1 override %d", n)
	}
	for kv, want := range map[[2]string]string{
		{"max.connections.per.ip", "0"}:                  "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.",
		{"max.connections.per.ip.overrides", "10.0.0.1"}: "is not host:count",
		{"max.connections.per.ip.overrides", "h:-1"}:     "non-negative integer",
		{"max.connections", "-1"}:                        "max.connections",
	} {
		_, err := Parse(map[string]string{kv[0]: kv[1]}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: %v, want %q", kv[0], kv[1], err, want)
		}
	}

	b, err = Parse(map[string]string{"listeners": "PLAINTEXT://:9092,INTERNAL://:9093", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
		"inter.broker.listener.name": "INTERNAL", "listener.name.internal.max.connections": "50", "listener.name.plaintext.max.connection.creation.rate": "10"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pl := b.ConnectionLimits.PerListener; pl["INTERNAL"] != (ListenerConnectionLimits{Max: 50, CreationRate: Unlimited}) || pl["PLAINTEXT"] != (ListenerConnectionLimits{Max: Unlimited, CreationRate: 10}) {
		t.Fatalf("per listener %+v", pl)
	}
	for kv, want := range map[[2]string]string{
		{"listener.name.nosuch.max.connections", "5"}:     "listener NOSUCH is not in listeners",
		{"listener.name.plaintext.max.connections", "-1"}: "listener.name.plaintext.max.connections",
	} {
		if _, err := Parse(map[string]string{kv[0]: kv[1]}, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: %v, want %q", kv[0], kv[1], err, want)
		}
	}
}
