package config

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// Java classes and features Gregor does not have are refused unless set
// to Kafka's default; the version keys are validated as
// MetadataVersion.fromVersionString; the keys left to the not-applied
// warning still get Kafka's validators.
func TestClassVersionAndValidatedKeys(t *testing.T) {
	for kv, want := range map[[2]string]string{
		{"metric.reporters", ""}:                                                     "",
		{"metric.reporters", JmxReporter}:                                            "",
		{"metric.reporters", JmxReporter + ", com.example.Reporter"}:                 "Gregor cannot load Java classes: metric.reporters=com.example.Reporter",
		{"kafka.metrics.reporters", "io.confluent.Reporter"}:                         "Gregor cannot load Java classes: kafka.metrics.reporters=io.confluent.Reporter",
		{"create.topic.policy.class.name", "com.example.Policy"}:                     "Gregor cannot load Java classes: create.topic.policy.class.name=com.example.Policy",
		{"alter.config.policy.class.name", "com.example.Policy"}:                     "Gregor cannot load Java classes: alter.config.policy.class.name=com.example.Policy",
		{"zookeeper.clientCnxnSocket", "org.apache.zookeeper.ClientCnxnSocketNetty"}: "Gregor cannot load Java classes",
		{"zookeeper.clientCnxnSocket", "org.apache.zookeeper.ClientCnxnSocketNIO"}:   "",
		{"delegation.token.master.key", "s3cret"}:                                    "Gregor has no delegation tokens",
		{"delegation.token.secret.key", "s3cret"}:                                    "Gregor has no delegation tokens",
		{"zookeeper.set.acl", "true"}:                                                "zookeeper.set.acl is true, but",
		{"zookeeper.set.acl", "false"}:                                               "",
		{"zookeeper.set.acl", "maybe"}:                                               "zookeeper.set.acl",
		{"inter.broker.protocol.version", "3.9"}:                                     "",
		{"inter.broker.protocol.version", "3.9.0"}:                                   "",
		{"inter.broker.protocol.version", "3.9-IV0"}:                                 "",
		{"inter.broker.protocol.version", "2.8"}:                                     "",
		{"inter.broker.protocol.version", "3.10"}:                                    "Version 3.10 is not a valid version",
		{"inter.broker.protocol.version", "4.0"}:                                     "Version 4.0 is not a valid version",
		{"inter.broker.protocol.version", "4.0-IV1"}:                                 "speak Kafka 3.9's inter-broker protocol",
		{"inter.broker.protocol.version", "2.7"}:                                     "speak Kafka 3.9's inter-broker protocol",
		{"inter.broker.protocol.version", "0.10.2.1"}:                                "speak Kafka 3.9's inter-broker protocol",
		{"log.message.format.version", "0.10.2"}:                                     "",
		{"log.message.format.version", "banana"}:                                     "Version banana is not a valid version",
		{"background.threads", "0"}:                                                  "Value must be at least 1",
		{"zookeeper.max.in.flight.requests", "0"}:                                    "Value must be at least 1",
		{"metrics.num.samples", "x"}:                                                 "Not a number of type INT",
		{"metrics.sample.window.ms", "0"}:                                            "Value must be at least 1",
		{"metrics.recording.level", "debug"}:                                         "",
		{"metrics.recording.level", "LOUD"}:                                          "RecordingLevel.LOUD",
	} {
		_, err := Parse(map[string]string{kv[0]: kv[1]}, nil)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", kv, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: got %v, want %q", kv, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: the secret is in the error: %v", kv, err)
		}
	}
	// Below 3.0 Kafka still applies log.message.format.version: a format
	// before v2 is refused, a later one accepted.
	if _, err := Parse(map[string]string{"inter.broker.protocol.version": "2.8", "log.message.format.version": "0.10.2"}, nil); err == nil ||
		!strings.Contains(err.Error(), "Gregor writes message format v2 only") {
		t.Errorf("IBP 2.8 with format 0.10.2: %v", err)
	}
	if _, err := Parse(map[string]string{"inter.broker.protocol.version": "2.8", "log.message.format.version": "2.8"}, nil); err != nil {
		t.Errorf("IBP 2.8 with format 2.8: %v", err)
	}
	// From 3.0 on it is ignored, with Kafka's warning.
	core, logs := observer.New(zapcore.WarnLevel)
	if _, err := Parse(map[string]string{"log.message.format.version": "2.1"}, zap.New(core)); err != nil {
		t.Fatal(err)
	}
	want := "Broker configuration log.message.format.version with value 2.1 is ignored because the inter-broker protocol version `3.9-IV0` is greater or equal than 3.0. This configuration is deprecated and it will be removed in Apache Kafka 4.0."
	if logs.FilterMessage(want).Len() != 1 {
		t.Errorf("no warning %q in %v", want, logs.All())
	}
}
