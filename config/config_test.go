package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

func writeProps(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLoad(t *testing.T, path string) (*Broker, *observer.ObservedLogs) {
	t.Helper()
	log, logs := observed()
	b, err := Load(path, log)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return b, logs
}

func noWarnings(t *testing.T, logs *observer.ObservedLogs) {
	t.Helper()
	for _, e := range logs.All() {
		t.Errorf("unexpected log line: %s %v", e.Message, e.ContextMap())
	}
}

// The seed articles' server.properties files load with every key known
// (no warnings) and the values they set.
func TestSeedSingleNode(t *testing.T) {
	b, logs := mustLoad(t, "testdata/seed-single.properties")
	noWarnings(t, logs)
	if b.BrokerID != 0 || !b.DeleteTopicEnable {
		t.Errorf("broker.id/delete.topic.enable = %d/%v", b.BrokerID, b.DeleteTopicEnable)
	}
	want := Listener{Name: "PLAINTEXT", Host: "192.168.15.131", Port: 9092}
	if len(b.Listeners) != 1 || b.Listeners[0] != want {
		t.Errorf("listeners = %+v, want %+v", b.Listeners, want)
	}
	if len(b.AdvertisedListeners) != 1 || b.AdvertisedListeners[0] != want {
		t.Errorf("advertised = %+v, want listeners", b.AdvertisedListeners)
	}
	if got := strings.Join(b.LogDirs, ","); got != "/data/kafka/data" {
		t.Errorf("log.dirs = %q", got)
	}
	if b.LogFlushIntervalMessages != 10000 || b.LogFlushIntervalMs != 1000 {
		t.Errorf("flush = %d msgs / %d ms", b.LogFlushIntervalMessages, b.LogFlushIntervalMs)
	}
	if b.LogRetentionMs != 168*3600*1000 || b.LogRetentionBytes != 1<<30 || b.LogSegmentBytes != 1<<30 {
		t.Errorf("retention %d ms %d bytes, segment %d", b.LogRetentionMs, b.LogRetentionBytes, b.LogSegmentBytes)
	}
	if b.ZookeeperConnect != "192.168.15.131:2181,192.168.15.132:2181,192.168.15.133:2181" {
		t.Errorf("zookeeper.connect = %q", b.ZookeeperConnect)
	}
	if b.ZookeeperConnectionTimeout != 6*time.Second || b.ZookeeperSessionTimeout != 18*time.Second {
		t.Errorf("zk timeouts %v %v", b.ZookeeperConnectionTimeout, b.ZookeeperSessionTimeout)
	}
	if b.OffsetsTopicReplicationFactor != 1 || b.TransactionStateLogReplicationFactor != 1 || b.TransactionStateLogMinIsr != 1 {
		t.Errorf("internal topics rf %d/%d min isr %d", b.OffsetsTopicReplicationFactor, b.TransactionStateLogReplicationFactor, b.TransactionStateLogMinIsr)
	}
	if b.GroupInitialRebalanceDelay != 0 || b.LogRetentionCheckInterval != 300*time.Second {
		t.Errorf("rebalance delay %v, retention check %v", b.GroupInitialRebalanceDelay, b.LogRetentionCheckInterval)
	}
	if b.NumNetworkThreads != 3 || b.NumIOThreads != 8 || b.SocketRequestMaxBytes != 104857600 || b.SocketSendBufferBytes != 102400 {
		t.Errorf("socket settings %+v", b)
	}
}

// server0.properties has `queued.max.requests =500` and
// `log.cleanup.policy = delete` (spaces around '='), listeners with an empty
// host and legacy port/host.name beside it (listeners wins).
func TestSeedClusterFiles(t *testing.T) {
	for file, want := range map[string]struct {
		id   int32
		port int
		dir  string
	}{
		"testdata/seed-server0.properties": {0, 9092, "/tmp/kafka-logs"},
		"testdata/seed-server2.properties": {2, 9094, "/tmp/kafka-logs2"},
	} {
		b, logs := mustLoad(t, file)
		noWarnings(t, logs)
		if b.BrokerID != want.id || b.LogDirs[0] != want.dir || b.NumPartitions != 5 || b.NumNetworkThreads != 4 {
			t.Errorf("%s: id %d dirs %v partitions %d network threads %d", file, b.BrokerID, b.LogDirs, b.NumPartitions, b.NumNetworkThreads)
		}
		if l := b.Listeners[0]; l.Host != "" || l.Port != want.port {
			t.Errorf("%s: listener %+v: want all interfaces on %d (listeners beats host.name)", file, l, want.port)
		}
		if a := b.AdvertisedListeners[0]; a.Host == "" || a.Port != want.port {
			t.Errorf("%s: advertised %+v: want a host name and port %d", file, a, want.port)
		}
		if b.QueuedMaxRequests != 500 || b.LogCleanupPolicy != "delete" || b.LogCleanerEnable {
			t.Errorf("%s: queued %d policy %q cleaner %v", file, b.QueuedMaxRequests, b.LogCleanupPolicy, b.LogCleanerEnable)
		}
		if b.Raw["queued.max.requests"] != "500" {
			t.Errorf("%s: Raw[queued.max.requests] = %q", file, b.Raw["queued.max.requests"])
		}
	}
}

// Without listeners, the legacy host.name/port keys make the one listener.
func TestSeedLegacyPortHostName(t *testing.T) {
	b, logs := mustLoad(t, "testdata/seed-legacy.properties")
	noWarnings(t, logs)
	want := Listener{Name: "PLAINTEXT", Host: "192.168.0.10", Port: 9092}
	if b.Listeners[0] != want || b.AdvertisedListeners[0] != want {
		t.Errorf("listeners %+v advertised %+v, want %+v", b.Listeners, b.AdvertisedListeners, want)
	}
	if b.LogDirs[0] != "/home/www/kafka-logs" {
		t.Errorf("log.dirs %v", b.LogDirs)
	}
}

func TestShippedServerProperties(t *testing.T) {
	b, logs := mustLoad(t, "server.properties")
	noWarnings(t, logs)
	if b.BrokerID != 0 || b.Listeners[0] != (Listener{"PLAINTEXT", "127.0.0.1", 9092}) {
		t.Errorf("id %d listeners %+v", b.BrokerID, b.Listeners)
	}
	if b.LogDirs[0] != "./data" || b.NumPartitions != 1 || b.OffsetsTopicReplicationFactor != 1 {
		t.Errorf("dirs %v partitions %d offsets rf %d", b.LogDirs, b.NumPartitions, b.OffsetsTopicReplicationFactor)
	}
	if b.GroupInitialRebalanceDelay != 0 || b.AdminListener != "127.0.0.1:9644" || b.ZookeeperConnect != "" {
		t.Errorf("delay %v admin %q zk %q", b.GroupInitialRebalanceDelay, b.AdminListener, b.ZookeeperConnect)
	}
}

func TestDefaults(t *testing.T) {
	b, err := Parse(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Listeners[0] != (Listener{"PLAINTEXT", "", 9092}) || b.LogDirs[0] != "/tmp/kafka-logs" {
		t.Errorf("listeners %+v dirs %v", b.Listeners, b.LogDirs)
	}
	if b.AdvertisedListeners[0].Host == "" {
		t.Errorf("advertised host must be filled with the host name: %+v", b.AdvertisedListeners)
	}
	if b.LogRetentionMs != 604800000 || b.LogRollMs != 604800000 || b.LogFlushIntervalMessages != math.MaxInt64 {
		t.Errorf("retention %d roll %d flush %d", b.LogRetentionMs, b.LogRollMs, b.LogFlushIntervalMessages)
	}
	if b.ZookeeperConnectionTimeout != b.ZookeeperSessionTimeout || b.MessageMaxBytes != 1048588 || !b.AutoCreateTopicsEnable {
		t.Errorf("zk conn %v, message.max.bytes %d, auto create %v", b.ZookeeperConnectionTimeout, b.MessageMaxBytes, b.AutoCreateTopicsEnable)
	}
}

// The offsets keys the group coordinator applies (OptionsFromBroker):
// Kafka's defaults, and the values a file sets.
func TestOffsetsKeys(t *testing.T) {
	b, err := Parse(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.OffsetsRetentionCheckInterval != 10*time.Minute || b.OffsetMetadataMaxBytes != 4096 {
		t.Errorf("defaults: check interval %v, metadata max %d; want 10m0s, 4096", b.OffsetsRetentionCheckInterval, b.OffsetMetadataMaxBytes)
	}
	b, err = Parse(map[string]string{"offsets.retention.check.interval.ms": "1500", "offset.metadata.max.bytes": "0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.OffsetsRetentionCheckInterval != 1500*time.Millisecond || b.OffsetMetadataMaxBytes != 0 {
		t.Errorf("set: check interval %v, metadata max %d; want 1.5s, 0", b.OffsetsRetentionCheckInterval, b.OffsetMetadataMaxBytes)
	}
}

func TestRetentionPrecedence(t *testing.T) {
	cases := []struct {
		kv   map[string]string
		want int64
	}{
		{map[string]string{"log.retention.hours": "1"}, 3600000},
		{map[string]string{"log.retention.hours": "1", "log.retention.minutes": "2"}, 120000},
		{map[string]string{"log.retention.hours": "1", "log.retention.minutes": "2", "log.retention.ms": "3"}, 3},
		{map[string]string{"log.retention.ms": "-5"}, -1},
		{map[string]string{"log.retention.hours": "-1"}, -1},
	}
	for _, c := range cases {
		b, err := Parse(c.kv, nil)
		if err != nil {
			t.Fatalf("%v: %v", c.kv, err)
		}
		if b.LogRetentionMs != c.want {
			t.Errorf("%v: retention %d ms, want %d", c.kv, b.LogRetentionMs, c.want)
		}
	}
	b, _ := Parse(map[string]string{"log.roll.hours": "2", "log.roll.ms": "500"}, nil)
	if b.LogRollMs != 500 {
		t.Errorf("log.roll.ms must beat hours: %d", b.LogRollMs)
	}
	b, _ = Parse(map[string]string{"log.roll.hours": "2"}, nil)
	if b.LogRollMs != 7200000 {
		t.Errorf("log.roll.hours=2 → %d", b.LogRollMs)
	}
	b, _ = Parse(map[string]string{"log.dir": "/a", "log.dirs": "/b, /c"}, nil)
	if strings.Join(b.LogDirs, "|") != "/b|/c" {
		t.Errorf("log.dirs must beat log.dir: %v", b.LogDirs)
	}
	b, _ = Parse(map[string]string{"log.dir": "/a"}, nil)
	if strings.Join(b.LogDirs, "|") != "/a" {
		t.Errorf("log.dir alone: %v", b.LogDirs)
	}
}

func TestListeners(t *testing.T) {
	b, err := Parse(map[string]string{
		"listeners":                      "PLAINTEXT://127.0.0.1:0, INTERNAL://[::1]:9093",
		"advertised.listeners":           "PLAINTEXT://broker1:19092",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Listeners) != 2 || b.Listeners[1] != (Listener{"INTERNAL", "::1", 9093}) || b.Listeners[0].Port != 0 {
		t.Errorf("listeners %+v", b.Listeners)
	}
	if b.Listeners[1].Addr() != "[::1]:9093" || b.Listeners[1].String() != "INTERNAL://[::1]:9093" {
		t.Errorf("addr %q string %q", b.Listeners[1].Addr(), b.Listeners[1].String())
	}
	if len(b.AdvertisedListeners) != 1 || b.AdvertisedListeners[0] != (Listener{"PLAINTEXT", "broker1", 19092}) {
		t.Errorf("advertised %+v", b.AdvertisedListeners)
	}
	b, _ = Parse(map[string]string{"port": "9999", "advertised.host.name": "pub", "advertised.port": "1234"}, nil)
	if b.Listeners[0] != (Listener{"PLAINTEXT", "", 9999}) || b.AdvertisedListeners[0] != (Listener{"PLAINTEXT", "pub", 1234}) {
		t.Errorf("legacy: %+v / %+v", b.Listeners, b.AdvertisedListeners)
	}
}

// A bad value is an error naming the key and the value.
func TestBadValues(t *testing.T) {
	cases := map[string]string{
		"num.partitions":                      "lots",
		"broker.id":                           "-2",
		"log.segment.bytes":                   "10",
		"listeners":                           "127.0.0.1:9092",
		"advertised.listeners":                "PLAINTEXT://h:99999",
		"delete.topic.enable":                 "yes",
		"compression.type":                    "brotli",
		"log.cleanup.policy":                  "delete,forever",
		"socket.request.max.bytes":            "0",
		"log.retention.hours":                 "1.5",
		"admin.listener":                      "nonsense",
		"num.io.threads":                      "0",
		"default.replication.factor":          "40000",
		"log.message.timestamp.type":          "Now",
		"port":                                "70000",
		"zookeeper.session.timeout.ms":        "x",
		"offsets.retention.check.interval.ms": "0",
		"offset.metadata.max.bytes":           "-1",
	}
	for k, v := range cases {
		_, err := Parse(map[string]string{k: v}, nil)
		if err == nil {
			t.Errorf("%s=%s: no error", k, v)
			continue
		}
		var ve *ValueError
		if !errors.As(err, &ve) || ve.Key != k || ve.Value != v {
			t.Errorf("%s=%s: error %v (%T) does not name the key and value", k, v, err, err)
		}
		if !strings.Contains(err.Error(), k) || !strings.Contains(err.Error(), v) {
			t.Errorf("%s=%s: message %q", k, v, err)
		}
	}
	if _, err := Parse(map[string]string{"listeners": "PLAINTEXT://:1,PLAINTEXT://:2"}, nil); err == nil {
		t.Error("duplicate listener names accepted")
	}
	if _, err := Parse(map[string]string{"advertised.listeners": "OTHER://h:1"}, nil); err == nil {
		t.Error("advertised listener name outside listeners accepted")
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := Load(writeProps(t, "broker.id=0\nnum.partitions = lots\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "num.partitions") || !strings.Contains(err.Error(), "lots") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.properties"), nil); err == nil {
		t.Fatal("missing file: no error")
	}
}

// Unknown keys: one WARN line each, the broker still starts; ${...} is not
// expanded. Known-ignored keys warn with their reason (ignored_test.go).
func TestUnknownAndIgnoredKeys(t *testing.T) {
	path := writeProps(t, "broker.id=3\nno.such.key=1\nother.unknown=${broker.id}\nlog.dirs=/x/${y}\n")
	b, logs := mustLoad(t, path)
	if logs.FilterLevelExact(zapcore.WarnLevel).Len() != 2 || logs.Len() != 2 {
		t.Fatalf("want 2 WARN lines, got %v", logs.All())
	}
	keys := []string{logs.All()[0].ContextMap()["key"].(string), logs.All()[1].ContextMap()["key"].(string)}
	if strings.Join(keys, ",") != "no.such.key,other.unknown" {
		t.Errorf("warned keys %v", keys)
	}
	if b.Raw["other.unknown"] != "${broker.id}" || b.LogDirs[0] != "/x/${y}" || b.BrokerID != 3 {
		t.Errorf("raw %q dirs %v id %d", b.Raw["other.unknown"], b.LogDirs, b.BrokerID)
	}
}

// Java properties syntax: ':' separator, continuation lines, '!' comments.
func TestPropertiesSyntax(t *testing.T) {
	b, logs := mustLoad(t, writeProps(t, "! comment\nbroker.id: 7\nlog.dirs=/a,\\\n    /b\n  num.partitions   12  \n"))
	noWarnings(t, logs)
	if b.BrokerID != 7 || strings.Join(b.LogDirs, "|") != "/a|/b" || b.NumPartitions != 12 {
		t.Errorf("id %d dirs %v partitions %d", b.BrokerID, b.LogDirs, b.NumPartitions)
	}
}
