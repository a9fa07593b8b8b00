package config

import (
	"testing"
	"time"
)

// The replica fetcher keys: Kafka's defaults, validators and the two
// KafkaConfig rules between them and replica.lag.time.max.ms, with
// Kafka's messages.
func TestReplicaFetchKeys(t *testing.T) {
	b, err := Parse(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.ReplicaFetch != (ReplicaFetch{MaxBytes: 1048576, MinBytes: 1, WaitMax: 500 * time.Millisecond, Backoff: time.Second,
		ResponseMaxBytes: 10485760, SocketTimeout: 30 * time.Second, SocketReceiveBufferBytes: 65536}) {
		t.Errorf("defaults %+v", b.ReplicaFetch)
	}
	if len(b.IgnoredKeys()) != 0 {
		t.Errorf("ignored %v", b.IgnoredKeys())
	}
	for _, tc := range []struct {
		kv   map[string]string
		want string
	}{
		{map[string]string{"replica.fetch.wait.max.ms": "40000"},
			"Invalid value 30000 for configuration replica.socket.timeout.ms: replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent unnecessary socket timeouts"},
		{map[string]string{"replica.fetch.wait.max.ms": "40000", "replica.socket.timeout.ms": "60000"},
			"Invalid value 40000 for configuration replica.fetch.wait.max.ms: replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to prevent frequent changes in ISR"},
		{map[string]string{"replica.fetch.max.bytes": "-1"}, "Invalid value -1 for configuration replica.fetch.max.bytes: Value must be at least 0"},
		{map[string]string{"replica.fetch.backoff.ms": "-1"}, "Invalid value -1 for configuration replica.fetch.backoff.ms: Value must be at least 0"},
		{map[string]string{"replica.socket.receive.buffer.bytes": "0"}, "Invalid value 0 for configuration replica.socket.receive.buffer.bytes: Value must be -1 (the OS default) or at least 1"},
		{map[string]string{"controller.socket.timeout.ms": "0"}, "Invalid value 0 for configuration controller.socket.timeout.ms: Value must be at least 1"},
	} {
		_, err := Parse(tc.kv, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: err %v, want %s", tc.kv, err, tc.want)
		}
	}
	b, err = Parse(map[string]string{"replica.fetch.wait.max.ms": "30000", "replica.socket.timeout.ms": "30000",
		"controlled.shutdown.enable": "FALSE", "controlled.shutdown.max.retries": "1", "controlled.shutdown.retry.backoff.ms": "10",
		"controller.socket.timeout.ms": "1234"}, nil)
	if err != nil {
		t.Fatal(err) // equal values pass Kafka's rules
	}
	if b.ControlledShutdown != (ControlledShutdown{Enable: false, MaxRetries: 1, RetryBackoff: 10 * time.Millisecond}) || b.ControllerSocketTimeout != 1234*time.Millisecond {
		t.Errorf("controlled shutdown %+v, controller socket timeout %v", b.ControlledShutdown, b.ControllerSocketTimeout)
	}
}

// log.roll.jitter.ms > log.roll.jitter.hours is segment.jitter.ms's
// default (LogConfig), a topic's segment.jitter.ms overrides it, and a
// negative log.roll.jitter.ms gets Kafka's message.
func TestRollJitterKeys(t *testing.T) {
	b, err := Parse(map[string]string{"log.roll.jitter.hours": "2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := b.LogConfig(); c.SegmentJitterMs != 2*3600*1000 {
		t.Errorf("log.roll.jitter.hours=2: SegmentJitterMs %d", c.SegmentJitterMs)
	}
	b, err = Parse(map[string]string{"log.roll.jitter.hours": "2", "log.roll.jitter.ms": "1500"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := TopicLogConfig(b.LogConfig(), map[string]string{})
	if err != nil || c.SegmentJitterMs != 1500 {
		t.Errorf("log.roll.jitter.ms=1500: SegmentJitterMs %d, %v", c.SegmentJitterMs, err)
	}
	c, err = TopicLogConfig(b.LogConfig(), map[string]string{"segment.jitter.ms": "77"})
	if err != nil || c.SegmentJitterMs != 77 {
		t.Errorf("segment.jitter.ms=77: SegmentJitterMs %d, %v", c.SegmentJitterMs, err)
	}
	if _, err := Parse(map[string]string{"log.roll.jitter.ms": "-1"}, nil); err == nil ||
		err.Error() != "Invalid value -1 for configuration log.roll.jitter.ms: log.roll.jitter.ms must be greater than or equal to 0" {
		t.Errorf("negative jitter: %v", err)
	}
}

// log.preallocate and topic preallocate: false is accepted, true refused
// (Gregor does not preallocate; it is not accepted and ignored).
func TestPreallocateRefused(t *testing.T) {
	if _, err := Parse(map[string]string{"log.preallocate": "false"}, nil); err != nil {
		t.Fatal(err)
	}
	want := "Invalid value true for configuration log.preallocate: Gregor does not preallocate segment files; only false is supported"
	if _, err := Parse(map[string]string{"log.preallocate": "true"}, nil); err == nil || err.Error() != want {
		t.Errorf("log.preallocate=true: %v", err)
	}
	if _, err := TopicLogConfig(Defaults().LogConfig(), map[string]string{"preallocate": "true"}); err == nil {
		t.Error("topic preallocate=true accepted")
	}
	if _, err := TopicLogConfig(Defaults().LogConfig(), map[string]string{"preallocate": "false"}); err != nil {
		t.Errorf("topic preallocate=false: %v", err)
	}
}
