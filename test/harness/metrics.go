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
