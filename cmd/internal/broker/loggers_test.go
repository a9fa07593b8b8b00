package broker

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestBrokerLoggersDeclared: every log.Named("…") of this package (and of
// the command that starts it) is in brokerLoggers, so DescribeConfigs of
// BROKER_LOGGER lists it from the start.
func TestBrokerLoggersDeclared(t *testing.T) {
	re := regexp.MustCompile(`\.Named\("([^"]+)"\)`)
	files, _ := filepath.Glob("*.go")
	more, _ := filepath.Glob("../../gregor/*.go")
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			if !slices.Contains(brokerLoggers, m[1]) {
				t.Errorf("%s: logger %q is not in brokerLoggers", f, m[1])
			}
		}
	}
}
