package admin

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"gregor/replication/metadata"
)

func gaugeValue(t *testing.T, c prometheus.Collector, name string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("%s not gathered", name)
	return 0
}

// TestActiveControllerFromTheController: active_controller_count comes
// from the controller (ActiveController) when given, not from the
// metadata cache's controller id, which lags behind a resignation.
func TestActiveControllerFromTheController(t *testing.T) {
	snap := &metadata.Snapshot{ControllerID: 2, Topics: map[string]*metadata.Topic{}}
	get := func() *metadata.Snapshot { return snap }
	const name = "kafka_controller_kafkacontroller_active_controller_count"
	for _, tc := range []struct {
		active func() bool
		want   float64
	}{
		{nil, 1}, // no controller hook: the cache decides
		{func() bool { return false }, 0},
		{func() bool { return true }, 1},
	} {
		got := gaugeValue(t, &stateCollector{brokerID: 2, snapshot: get, active: tc.active}, name)
		if got != tc.want {
			t.Errorf("active hook %v: %s = %v, want %v", tc.active != nil, name, got, tc.want)
		}
	}
	if got := gaugeValue(t, &stateCollector{brokerID: 2, snapshot: func() *metadata.Snapshot { return nil }, active: func() bool { return true }}, name); got != 1 {
		t.Errorf("active before the first snapshot: %v, want 1", got)
	}
}

// TestEventQueueGauge: event_queue_size is what the controller answered;
// no sample when it could not answer (a scrape never shows a made-up 0).
func TestEventQueueGauge(t *testing.T) {
	const name = "kafka_controller_controllereventmanager_event_queue_size"
	if got := gaugeValue(t, &stateCollector{eventQueue: func() (int, bool) { return 3, true }}, name); got != 3 {
		t.Fatalf("%s = %v, want 3", name, got)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&stateCollector{eventQueue: func() (int, bool) { return 0, false }})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			t.Fatalf("%s sampled although the controller did not answer", name)
		}
	}
}
