package config

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Defaults, values and refusals of the cleaner I/O and connection setup keys.
func TestCleanerIOAndConnectionSetupKeys(t *testing.T) {
	d := Defaults()
	if d.CleanerIO != (CleanerIO{Threads: 1, BufferSize: 524288, MaxBytesPerSecond: math.MaxFloat64}) {
		t.Fatalf("CleanerIO defaults %+v", d.CleanerIO)
	}
	if d.ConnectionSetup != (ConnectionSetup{Timeout: 10 * time.Second, Max: 30 * time.Second}) {
		t.Fatalf("ConnectionSetup defaults %+v", d.ConnectionSetup)
	}
	b, err := Parse(map[string]string{"log.cleaner.threads": "3", "log.cleaner.io.buffer.size": "65536",
		"log.cleaner.io.max.bytes.per.second": "1048576.5", "socket.connection.setup.timeout.ms": "250",
		"socket.connection.setup.timeout.max.ms": "1000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.CleanerIO != (CleanerIO{Threads: 3, BufferSize: 65536, MaxBytesPerSecond: 1048576.5}) {
		t.Fatalf("CleanerIO %+v", b.CleanerIO)
	}
	if b.ConnectionSetup != (ConnectionSetup{Timeout: 250 * time.Millisecond, Max: time.Second}) {
		t.Fatalf("ConnectionSetup %+v", b.ConnectionSetup)
	}
	for kv, want := range map[[2]string]string{
		{"log.cleaner.threads", "-1"}:                    "Value must be at least 0",
		{"log.cleaner.threads", "0"}:                     "",
		{"log.cleaner.io.buffer.size", "-1"}:             "Value must be at least 0",
		{"log.cleaner.io.buffer.size", "4294967296"}:     "Not a number of type INT",
		{"log.cleaner.io.max.bytes.per.second", "0"}:     "Value must be greater than 0",
		{"log.cleaner.io.max.bytes.per.second", "abc"}:   "Not a number of type DOUBLE",
		{"socket.connection.setup.timeout.ms", "0"}:      "Value must be at least 1",
		{"socket.connection.setup.timeout.max.ms", "-5"}: "Value must be at least 1",
	} {
		_, err := Parse(map[string]string{kv[0]: kv[1]}, nil)
		switch {
		case want == "" && err != nil:
			t.Errorf("%v: %v", kv, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%v: got %v, want %q", kv, err, want)
		}
	}
	for _, k := range []string{"log.cleaner.threads", "log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second",
		"socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms"} {
		if _, ignored := ignoredKeys[k]; ignored {
			t.Errorf("%s still in ignoredKeys", k)
		}
	}
}

// The cleaner keys are dynamic (LogCleaner.ReconfigurableConfigs);
// log.cleaner.threads follows Kafka's validateReconfiguration.
func TestCleanerIODynamic(t *testing.T) {
	for _, k := range []string{"log.cleaner.threads", "log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second"} {
		if !IsDynamicBrokerConfig(k) {
			t.Errorf("%s not dynamic", k)
		}
		if err := ValidateDynamic(map[string]string{k: "2"}, false); err != nil {
			t.Errorf("%s=2: %v", k, err)
		}
	}
	if err := ValidateDynamic(map[string]string{"socket.connection.setup.timeout.ms": "5"}, false); err == nil ||
		!strings.Contains(err.Error(), "Cannot update these configs dynamically: Set(socket.connection.setup.timeout.ms)") {
		t.Errorf("socket.connection.setup.timeout.ms dynamic: %v", err)
	}
	if err := ValidateDynamic(map[string]string{"log.cleaner.io.max.bytes.per.second": "-1"}, false); err == nil ||
		!strings.Contains(err.Error(), "Value must be greater than 0") {
		t.Errorf("negative rate: %v", err)
	}
	for _, c := range []struct {
		cur, next int
		want      string
	}{
		{1, 2, ""}, {4, 2, ""}, {4, 8, ""}, {3, 1, ""},
		{1, 0, "Log cleaner threads should be at least 1"},
		{5, 1, "Log cleaner threads cannot be reduced to less than half the current value 5"},
		{2, 5, "Log cleaner threads cannot be increased to more than double the current value 2"},
	} {
		err := ValidateCleanerThreads(c.cur, c.next)
		if (c.want == "") != (err == nil) || (err != nil && err.Error() != c.want) {
			t.Errorf("%d → %d: %v, want %q", c.cur, c.next, err, c.want)
		}
	}
}
