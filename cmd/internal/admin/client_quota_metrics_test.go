package admin

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"gregor/quota"
	"gregor/quota/clientquota"
)

// TestClientQuotaCollector: one series per sensor with Kafka's tags as
// labels, the rate, the throttle time, the limit and (mutations) the
// tokens; an expired sensor's series are gone at the next scrape.
func TestClientQuotaCollector(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	m := clientquota.NewManager(quota.DefaultConfig, quota.DefaultConfig, func() time.Time { return now })
	m.Set(clientquota.Entity{Client: "app"}, map[string]float64{clientquota.ProducerByteRate: 1000})
	m.Set(clientquota.Entity{User: clientquota.Default}, map[string]float64{clientquota.ControllerMutationRate: 2})
	// 30000 bytes over the 10 s minimum window: 3000 B/s, throttled
	// (3000-1000)/1000 × 10 s = 20 s.
	if d := m.RecordAndThrottle(clientquota.Produce, "alice", "app", 30000); d != 20*time.Second {
		t.Fatalf("throttle %v", d)
	}
	m.Mutation("alice", "app", false).Record(5)
	reg := prometheus.NewRegistry()
	reg.MustRegister(&clientQuotaCollector{m: m})
	got := func() map[string]float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			for _, mt := range mf.GetMetric() {
				k := mf.GetName()
				for _, l := range mt.GetLabel() {
					k += "," + l.GetName() + "=" + l.GetValue()
				}
				out[k] = mt.GetGauge().GetValue()
			}
		}
		return out
	}
	want := map[string]float64{
		"kafka_server_produce_byte_rate,client_id=app,user=":                             3000,
		"kafka_server_produce_throttle_time,client_id=app,user=":                         20000,
		"gregor_client_quota_limit,client_id=app,quota_type=produce,user=":               1000,
		"kafka_server_controllermutation_mutation_rate,client_id=,user=alice":            0.5,
		"kafka_server_controllermutation_throttle_time,client_id=,user=alice":            0,
		"kafka_server_controllermutation_tokens,client_id=,user=alice":                   2*11 - 5,
		"gregor_client_quota_limit,client_id=,quota_type=controller_mutation,user=alice": 2,
	}
	g := got()
	for k, v := range want {
		if g[k] != v {
			t.Errorf("%s = %v, want %v", k, g[k], v)
		}
	}
	if len(g) != len(want) {
		t.Errorf("series %v, want exactly %v", g, want)
	}
	now = now.Add(clientquota.SensorExpiration + time.Minute)
	if g := got(); len(g) != 0 {
		t.Fatalf("expired sensors still exported: %v", g)
	}
}
