package cluster

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"gregor/test/harness"
)

var metricsHTTP = &http.Client{Timeout: 5 * time.Second}

// metric sums the samples of the metric family name on broker id's admin
// /metrics (Prometheus text format); ok is false when the broker has no
// admin listener, is down, or the family is absent.
func (c *cluster) metric(id int32, name string) (float64, bool) {
	url := c.admins[id]
	if url == "" {
		return 0, false
	}
	sum, found, err := harness.MetricSum(metricsHTTP, url, name)
	return sum, found && err == nil
}

// mustMetric is metric failing the test when the value cannot be read.
func (c *cluster) mustMetric(id int32, name string) float64 {
	c.t.Helper()
	v, ok := c.metric(id, name)
	if !ok {
		c.t.Fatalf("broker %d: %s not readable on %q/metrics", id, name, c.admins[id])
	}
	return v
}

// waitMetric waits up to d until broker id's metric satisfies cond.
func (c *cluster) waitMetric(id int32, name string, d time.Duration, what string, cond func(float64) bool) float64 {
	c.t.Helper()
	var v float64
	c.waitFor(fmt.Sprintf("broker %d %s %s", id, name, what), d, func() (bool, string) {
		var ok bool
		v, ok = c.metric(id, name)
		return ok && cond(v), fmt.Sprintf("%v (readable %v)", v, ok)
	})
	return v
}

// Metric families the tests assert.
const (
	mIsrShrinks       = "kafka_server_replicamanager_isr_shrinks_total"
	mIsrExpands       = "kafka_server_replicamanager_isr_expands_total"
	mUnderMinIsr      = "kafka_server_replicamanager_under_min_isr_partition_count"
	mActiveController = "kafka_controller_kafkacontroller_active_controller_count"
)

// waitActiveController waits until exactly one running broker with an
// admin listener reports active_controller_count 1, the broker /controller
// names, and every other running one reports 0.
func (c *cluster) waitActiveController(d time.Duration) int32 {
	c.t.Helper()
	var ctrl int32
	c.waitFor("active_controller_count 1 on the controller only", d, func() (bool, string) {
		ctrl = c.controllerID()
		var desc []string
		good := ctrl > 0
		for id, b := range c.brokers {
			if !b.Running() || c.admins[id] == "" {
				continue
			}
			v, ok := c.metric(id, mActiveController)
			desc = append(desc, fmt.Sprintf("%d:%v(%v)", id, v, ok))
			want := 0.0
			if id == ctrl {
				want = 1
			}
			if !ok || v != want {
				good = false
			}
		}
		return good, fmt.Sprintf("/controller %d; %s", ctrl, strings.Join(desc, " "))
	})
	return ctrl
}
