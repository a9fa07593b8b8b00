package zkmeta

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPaths(t *testing.T) {
	for got, want := range map[string]string{
		BrokerPath(3):               "/brokers/ids/3",
		TopicPath("orders"):         "/brokers/topics/orders",
		PartitionStatePath("o", 12): "/brokers/topics/o/partitions/12/state",
		TopicConfigPath("o"):        "/config/topics/o",
		DeleteTopicPath("o"):        "/admin/delete_topics/o",
	} {
		if got != want {
			t.Errorf("got %q want %q", got, want)
		}
	}
}

func TestBrokerInfoGolden(t *testing.T) {
	b := BrokerInfo{ID: 1, JmxPort: -1, Timestamp: 1543300074836, Endpoints: []Endpoint{
		{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "10.9.167.48", Port: 9092}}}
	want := `{"version":5,"host":"10.9.167.48","port":9092,"endpoints":["PLAINTEXT://10.9.167.48:9092"],` +
		`"jmx_port":-1,"timestamp":"1543300074836","listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"features":{}}`
	if got := string(b.Encode()); got != want {
		t.Fatalf("encode\n got %s\nwant %s", got, want)
	}
	back, err := DecodeBrokerInfo(1, b.Encode())
	if err != nil || !reflect.DeepEqual(back, b) {
		t.Fatalf("round trip %+v %v", back, err)
	}
	// Kafka 2.x v4 data as written by a real broker, with a rack and a
	// non-PLAINTEXT listener first.
	v4 := `{"listener_security_protocol_map":{"INTERNAL":"SSL","PLAINTEXT":"PLAINTEXT"},"endpoints":["INTERNAL://[::1]:9093","PLAINTEXT://h:9092"],"rack":"r1","jmx_port":9999,"host":"h","timestamp":"1543300074835","port":9092,"version":4}`
	got, err := DecodeBrokerInfo(2, []byte(v4))
	if err != nil {
		t.Fatal(err)
	}
	want4 := BrokerInfo{ID: 2, Rack: "r1", JmxPort: 9999, Timestamp: 1543300074835, Endpoints: []Endpoint{
		{"INTERNAL", "SSL", "::1", 9093}, {"PLAINTEXT", "PLAINTEXT", "h", 9092}}}
	if !reflect.DeepEqual(got, want4) {
		t.Fatalf("v4 decode %+v", got)
	}
	// v1: host/port only.
	got, err = DecodeBrokerInfo(0, []byte(`{"jmx_port":-1,"timestamp":"1","host":"old","version":1,"port":9092}`))
	if err != nil || len(got.Endpoints) != 1 || got.Endpoints[0].ConnectionString() != "PLAINTEXT://old:9092" {
		t.Fatalf("v1 decode %+v %v", got, err)
	}
	if _, err := DecodeBrokerInfo(0, []byte(`{"endpoints":["nohost"]}`)); !errors.Is(err, ErrBadData) {
		t.Fatalf("bad endpoint: %v", err)
	}
}

func TestTopicAssignmentGolden(t *testing.T) {
	id := [16]byte{0xd4, 0xde, 0xc5, 0x96, 0x5c, 0x23, 0x49, 0x26, 0x96, 0xf4, 0x90, 0x95, 0x2d, 0x46, 0x51, 0x19}
	a := TopicAssignment{TopicID: id, Partitions: map[int32][]int32{0: {0, 1}, 1: {1, 0}}}
	want := `{"version":3,"topic_id":"1N7FllwjSSaW9JCVLUZRGQ","partitions":{"0":[0,1],"1":[1,0]},"adding_replicas":{},"removing_replicas":{}}`
	if got := string(a.Encode()); got != want {
		t.Fatalf("encode\n got %s\nwant %s", got, want)
	}
	back, err := DecodeTopicAssignment("t", a.Encode())
	if err != nil || back.TopicID != id || !reflect.DeepEqual(back.Partitions, a.Partitions) {
		t.Fatalf("round trip %+v %v", back, err)
	}
	if ps := back.SortedPartitions(); !reflect.DeepEqual(ps, []int32{0, 1}) {
		t.Fatalf("sorted %v", ps)
	}
	// Without an id: version 2, as written before topic ids.
	v2 := TopicAssignment{Partitions: map[int32][]int32{0: {0}}}
	if got := string(v2.Encode()); got != `{"version":2,"partitions":{"0":[0]},"adding_replicas":{},"removing_replicas":{}}` {
		t.Fatalf("v2 %s", got)
	}
	// Version 1 (partitions only) decodes.
	v1, err := DecodeTopicAssignment("t", []byte(`{"version":1,"partitions":{"2":[3]}}`))
	if err != nil || !reflect.DeepEqual(v1.Partitions, map[int32][]int32{2: {3}}) {
		t.Fatalf("v1 %+v %v", v1, err)
	}
	if _, err := DecodeTopicAssignment("t", []byte(`{"partitions":{"x":[1]}}`)); !errors.Is(err, ErrBadData) {
		t.Fatalf("bad key: %v", err)
	}
}

func TestSmallNodesGolden(t *testing.T) {
	ps := PartitionState{ControllerEpoch: 1, Leader: 0, LeaderEpoch: 0, ISR: []int32{0}}
	if got := string(ps.Encode()); got != `{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}` {
		t.Fatalf("state %s", got)
	}
	back, err := DecodePartitionState([]byte(`{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":55,"isr":[1,2,3]}`))
	if err != nil || back.Leader != 1 || back.LeaderEpoch != 55 || !reflect.DeepEqual(back.ISR, []int32{1, 2, 3}) {
		t.Fatalf("state decode %+v %v", back, err)
	}
	if got := string(EncodeConfig(map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"})); got != `{"version":1,"config":{"cleanup.policy":"compact","retention.ms":"1000"}}` {
		t.Fatalf("config %s", got)
	}
	if got := string(EncodeConfig(nil)); got != `{"version":1,"config":{}}` {
		t.Fatalf("empty config %s", got)
	}
	if c, err := DecodeConfig([]byte(`{"version":1,"config":{"a":"b"}}`)); err != nil || c["a"] != "b" {
		t.Fatalf("config decode %v %v", c, err)
	}
	if got := string(EncodeController(2, time.UnixMilli(1700000000123))); got != `{"version":1,"brokerid":2,"timestamp":"1700000000123"}` {
		t.Fatalf("controller %s", got)
	}
	if id, err := DecodeController([]byte(`{"version":1,"brokerid":7,"timestamp":"1"}`)); err != nil || id != 7 {
		t.Fatalf("controller decode %d %v", id, err)
	}
	if e, err := DecodeControllerEpoch(EncodeControllerEpoch(12)); err != nil || e != 12 || string(EncodeControllerEpoch(12)) != "12" {
		t.Fatalf("epoch %d %v", e, err)
	}
	if got := string(EncodeClusterID("1N7JbZwjS-aW9JCXTZUbGQ")); got != `{"version":"1","id":"1N7JbZwjS-aW9JCXTZUbGQ"}` {
		t.Fatalf("cluster id %s", got)
	}
	if id, err := DecodeClusterID([]byte(`{"version":"1","id":"abc"}`)); err != nil || id != "abc" {
		t.Fatalf("cluster id decode %q %v", id, err)
	}
	if _, err := DecodeClusterID([]byte(`{"version":"1"}`)); !errors.Is(err, ErrBadData) {
		t.Fatalf("empty cluster id: %v", err)
	}
	if got := string(EncodeConfigChange("topics/x")); got != `{"version":2,"entity_path":"topics/x"}` {
		t.Fatalf("change %s", got)
	}
}

func TestRandomUUID(t *testing.T) {
	seen := map[[16]byte]bool{}
	for i := 0; i < 200; i++ {
		u := RandomUUID()
		s := UUIDString(u)
		if len(s) != 22 || strings.HasPrefix(s, "-") || seen[u] {
			t.Fatalf("bad uuid %q", s)
		}
		seen[u] = true
		back, err := ParseUUID(s)
		if err != nil || back != u {
			t.Fatalf("parse %q: %v", s, err)
		}
	}
	if _, err := ParseUUID("short"); err == nil {
		t.Fatal("parsed a short uuid")
	}
}

func TestReadController(t *testing.T) {
	get := func(data string, err error) func(string) ([]byte, int32, error) {
		return func(path string) ([]byte, int32, error) {
			if path != ControllerPath {
				t.Fatalf("read %s, want %s", path, ControllerPath)
			}
			return []byte(data), 0, err
		}
	}
	for _, c := range []struct {
		data string
		err  error
		want int32
	}{
		{`{"version":1,"brokerid":3,"timestamp":"1"}`, nil, 3},
		{"2", nil, 2},
		{"", errors.New("no node"), -1},
		{"{not json", nil, -1},
	} {
		if got := ReadController(get(c.data, c.err)); got != c.want {
			t.Errorf("ReadController(%q, %v) = %d, want %d", c.data, c.err, got, c.want)
		}
	}
}
