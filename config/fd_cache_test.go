package config

import (
	"strings"
	"testing"
)

// log.segment.fd.cache.size: -1 (automatic, the default) or a positive
// count; 0, other negatives and non-numbers are refused naming the key.
func TestSegmentFDCacheSize(t *testing.T) {
	b, err := Parse(map[string]string{"log.dirs": "/tmp/x"}, nil)
	if err != nil || b.LogSegmentFDCacheSize != -1 {
		t.Fatalf("default %d, %v; want -1", b.LogSegmentFDCacheSize, err)
	}
	for v, want := range map[string]int{"-1": -1, "1": 1, "5000": 5000} {
		b, err := Parse(map[string]string{"log.dirs": "/tmp/x", "log.segment.fd.cache.size": v}, nil)
		if err != nil || b.LogSegmentFDCacheSize != want {
			t.Errorf("%s: %d, %v", v, b.LogSegmentFDCacheSize, err)
		}
	}
	for _, v := range []string{"0", "-2", "ten", "99999999999"} {
		_, err := Parse(map[string]string{"log.dirs": "/tmp/x", "log.segment.fd.cache.size": v}, nil)
		if err == nil || !strings.Contains(err.Error(), "log.segment.fd.cache.size") {
			t.Errorf("%q accepted or unnamed: %v", v, err)
		}
	}
}
