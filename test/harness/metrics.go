package harness

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// MetricSum scrapes adminURL's /metrics (Prometheus text format) with hc
// and sums the samples of the metric family name, every label set; found
// is false when the family has no sample. err is set when the listener
// did not answer, answered other than 200 OK, or the body could not be
// read to the end.
func MetricSum(hc *http.Client, adminURL, name string) (sum float64, found bool, err error) {
	resp, err := hc.Get(adminURL + "/metrics")
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false, fmt.Errorf("GET %s/metrics: %s", adminURL, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue // a comment, another family, or a longer name sharing the prefix
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
			found = true
		}
	}
	return sum, found, sc.Err()
}

// MetricValue scrapes adminURL's /metrics with hc and returns the sample
// of the metric family name whose labels are exactly labels (label values
// without escapes, as Gregor's are); found is false when there is none.
func MetricValue(hc *http.Client, adminURL, name string, labels map[string]string) (v float64, found bool, err error) {
	resp, err := hc.Get(adminURL + "/metrics")
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false, fmt.Errorf("GET %s/metrics: %s", adminURL, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		got := map[string]string{}
		if rest[0] == '{' {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			for _, kv := range strings.Split(rest[1:end], ",") {
				if k, val, ok := strings.Cut(kv, "="); ok {
					got[k] = strings.Trim(val, `"`)
				}
			}
			rest = rest[end+1:]
		}
		if len(got) != len(labels) {
			continue
		}
		match := true
		for k, want := range labels {
			if g, ok := got[k]; !ok || g != want {
				match = false
			}
		}
		if !match {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			return v, true, nil
		}
	}
	return 0, false, sc.Err()
}
