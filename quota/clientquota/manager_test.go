package clientquota

import (
	"testing"
	"time"

	"gregor/quota"
)

// TestPrecedence walks Kafka's DefaultQuotaCallback order: each step
// removes the most specific entity and the next one must apply.
func TestPrecedence(t *testing.T) {
	m := NewManager(quota.DefaultConfig, quota.DefaultConfig, nil)
	u, c := Sanitize("alice"), Sanitize("app")
	steps := []struct {
		e    Entity
		tags Tags
	}{
		{Entity{u, c}, Tags{u, "app"}},
		{Entity{u, Default}, Tags{u, "app"}},
		{Entity{User: u}, Tags{User: u}},
		{Entity{Default, c}, Tags{u, "app"}},
		{Entity{Default, Default}, Tags{u, "app"}},
		{Entity{User: Default}, Tags{User: u}},
		{Entity{Client: c}, Tags{ClientID: "app"}},
		{Entity{Client: Default}, Tags{ClientID: "app"}},
	}
	for i, s := range steps {
		m.Set(s.e, map[string]float64{ProducerByteRate: float64(i + 1)})
	}
	for i, s := range steps {
		tags, limit, ok := m.Resolve(Produce, "alice", "app")
		if !ok || limit != float64(i+1) || tags != s.tags {
			t.Fatalf("step %d (%s): got %v %v %v, want %v limit %d", i, s.e.Path(), tags, limit, ok, s.tags, i+1)
		}
		if _, _, ok := m.Resolve(Fetch, "alice", "app"); ok {
			t.Fatalf("a produce quota bounds fetch")
		}
		m.Set(s.e, nil)
	}
	if _, _, ok := m.Resolve(Produce, "alice", "app"); ok || m.Enabled(Produce) {
		t.Fatal("quota left after removing every entity")
	}
}

func TestThrottleAndMutation(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	m := NewManager(quota.DefaultConfig, quota.DefaultConfig, func() time.Time { return now })
	m.Set(Entity{Client: Default}, map[string]float64{ProducerByteRate: 100_000, ControllerMutationRate: 1})
	// 3e6 bytes over the 10 s minimum window = 3e5/s: (3e5-1e5)/1e5 × 10 s.
	if d := m.RecordAndThrottle(Produce, "ANONYMOUS", "x", 3e6); d != 20*time.Second {
		t.Fatalf("throttle %v, want 20s", d)
	}
	m.Unrecord(Produce, "ANONYMOUS", "x", 3e6)
	if d := m.RecordAndThrottle(Produce, "ANONYMOUS", "x", 1); d != 0 {
		t.Fatalf("after unrecord throttle %v, want 0", d)
	}
	if got := m.MaxValueInWindow(Produce, "u", "x"); got != 1e6 {
		t.Fatalf("max in window %v, want 1e6", got)
	}
	q := m.Mutation("ANONYMOUS", "x", true)
	if !q.Record(20) || q.Throttle() != 0 { // burst 11: overdraws to -9, not throttled yet (strict)
		t.Fatal("strict first overdraw refused or throttled")
	}
	q = m.Mutation("ANONYMOUS", "x", true)
	if q.Record(1) || q.Throttle() != 9*time.Second {
		t.Fatalf("strict second: want refused with 9s, got %v", q.Throttle())
	}
	p := m.Mutation("ANONYMOUS", "x", false)
	if !p.Record(1) || p.Throttle() != 10*time.Second {
		t.Fatalf("permissive: want recorded, throttle 10s, got %v", p.Throttle())
	}
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		k    string
		v    float64
		want string
		err  string
	}{
		{ProducerByteRate, 1048576, "1048576", ""},
		{ProducerByteRate, 1.5, "", "Configuration producer_byte_rate must be a LONG value"},
		{RequestPercentage, 200, "200.0", ""},
		{ControllerMutationRate, 0.5, "0.5", ""},
		{ConsumerByteRate, -1, "", "Quota consumer_byte_rate must be greater than 0"},
		{"bogus", 1, "", "Invalid configuration key bogus"},
	} {
		got, err := FormatValue(c.k, c.v)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Fatalf("%s=%v: %q %v, want %q %q", c.k, c.v, got, err, c.want, c.err)
		}
	}
	if s := FormatDouble(1e7); s != "1.0E7" {
		t.Fatalf("FormatDouble(1e7) = %s", s)
	}
}

// TestSensorExpiration: a sensor without a record for an hour is removed
// (Kafka's InactiveSensorExpirationTimeSeconds), one recorded meanwhile
// is kept, and an expired client id that comes back starts afresh.
func TestSensorExpiration(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	m := NewManager(quota.DefaultConfig, quota.DefaultConfig, func() time.Time { return now })
	m.Set(Entity{Client: Default}, map[string]float64{ProducerByteRate: 1000})
	for i := range 100 {
		m.RecordAndThrottle(Produce, "ANONYMOUS", "gone-"+string(rune('a'+i%26))+string(rune('a'+i/26)), 10)
	}
	m.RecordAndThrottle(Produce, "ANONYMOUS", "stays", 10)
	if n := m.Sensors(); n != 101 {
		t.Fatalf("%d sensors, want 101", n)
	}
	now = now.Add(SensorExpiration / 2)
	m.RecordAndThrottle(Produce, "ANONYMOUS", "stays", 10)
	now = now.Add(SensorExpiration/2 + time.Second)
	st := m.Stats()
	if len(st) != 1 || st[0].Tags.ClientID != "stays" || m.Sensors() != 1 {
		t.Fatalf("after an hour: %d sensors %+v, want only stays", m.Sensors(), st)
	}
	// An hour on, "stays" expires too, and a returning client id gets a
	// fresh sensor.
	now = now.Add(SensorExpiration)
	m.RecordAndThrottle(Produce, "ANONYMOUS", "gone-aa", 10)
	if n := m.Sensors(); n != 1 {
		t.Fatalf("%d sensors, want only the new gone-aa", n)
	}
	if st := m.Stats(); st[0].Tags.ClientID != "gone-aa" || st[0].Rate <= 0 {
		t.Fatalf("stats %+v", st)
	}
}
