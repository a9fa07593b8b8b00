package dumplog

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/record"
)

func strp(s string) *string { return &s }

// kafkaGroupValue is the group metadata of Kafka's own
// DumpLogSegmentsTest.testOffsetsMessageParser (GroupMetadataValue v4, one
// consumer member with a v3 subscription and assignment), with subscription
// and assignment bytes as given (nil: the encoded consumer protocol ones).
func kafkaGroupValue(subscription, assignment []byte) []byte {
	if subscription == nil {
		s := kmsg.NewConsumerMemberMetadata()
		s.Version = 3
		s.Topics = []string{"foo"}
		s.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "foo", Partitions: []int32{0}}}
		s.Generation = 0
		s.Rack = strp("rack")
		subscription = s.AppendTo(nil)
	}
	if assignment == nil {
		a := kmsg.NewConsumerMemberAssignment()
		a.Version = 3
		a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "foo", Partitions: []int32{0}}}
		assignment = a.AppendTo(nil)
	}
	v := kmsg.NewGroupMetadataValue()
	v.Version = 4
	v.ProtocolType = "consumer"
	v.Generation = 10
	v.Protocol = strp("range")
	v.Leader = strp("member")
	m := kmsg.NewGroupMetadataValueMember()
	m.MemberID, m.InstanceID, m.ClientID, m.ClientHost = "member", strp("instance"), "client", "host"
	m.SessionTimeoutMillis, m.RebalanceTimeoutMillis = 100, 1000
	m.Subscription, m.Assignment = subscription, assignment
	v.Members = []kmsg.GroupMetadataValueMember{m}
	return v.AppendTo(nil)
}

func groupKey(g string) []byte {
	k := kmsg.GroupMetadataKey{Version: 2, Group: g}
	return k.AppendTo(nil)
}

func offsetKey(version int16, g, topic string, p int32) []byte {
	k := kmsg.OffsetCommitKey{Version: version, Group: g, Topic: topic, Partition: p}
	return k.AppendTo(nil)
}

func offsetValue(v kmsg.OffsetCommitValue) []byte { return v.AppendTo(nil) }

// The expected texts of Kafka's DumpLogSegmentsTest for group metadata
// records, decoded consumer protocol and not.
func TestOffsetsDecoderKafkaGoldens(t *testing.T) {
	for _, tc := range []struct {
		name             string
		key, value       []byte
		wantKey, wantVal string
	}{
		{
			name:    "consumer protocol decoded",
			key:     groupKey("group"),
			value:   kafkaGroupValue(nil, nil),
			wantKey: `{"type":"2","data":{"group":"group"}}`,
			wantVal: `{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",` +
				`"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",` +
				`"groupInstanceId":"instance","clientId":"client","clientHost":"host",` +
				`"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],` +
				`"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],` +
				`"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":` +
				`[{"topic":"foo","partitions":[0]}],"userData":null}}]}}`,
		},
		{
			name:    "consumer protocol malformed",
			key:     groupKey("group"),
			value:   kafkaGroupValue([]byte("Subscription"), []byte("Assignment")),
			wantKey: `{"type":"2","data":{"group":"group"}}`,
			wantVal: `{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",` +
				`"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",` +
				`"groupInstanceId":"instance","clientId":"client","clientHost":"host",` +
				`"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":"U3Vic2NyaXB0aW9u",` +
				`"assignment":"QXNzaWdubWVudA=="}]}}`,
		},
		{
			name:    "key without value",
			key:     groupKey("group"),
			wantKey: `{"type":"2","data":{"group":"group"}}`,
			wantVal: `<DELETE>`,
		},
		{
			name:    "unknown record type",
			key:     []byte{0x7f, 0xff, 0, 0},
			value:   []byte{0, 0},
			wantKey: `Unknown record type 32767 at offset 0, skipping.`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, v := formatOffsetsRecord(tc.key, tc.value, 0)
			if k != tc.wantKey || v != tc.wantVal {
				t.Errorf("got\n key: %s\n payload: %s\nwant\n key: %s\n payload: %s", k, v, tc.wantKey, tc.wantVal)
			}
		})
	}
}

// A segment of __consumer_offsets records, dumped whole: every offset
// commit value version, a consumer group's metadata as Gregor writes it
// (v3), tombstones and records Kafka's parser skips.
func TestOffsetsDecoderLines(t *testing.T) {
	sub := kmsg.NewConsumerMemberMetadata()
	sub.Version = 1
	sub.Topics = []string{"orders", "payments"}
	sub.UserData = []byte("ud")
	sub.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "orders", Partitions: []int32{0, 2}}}
	asg := kmsg.NewConsumerMemberAssignment()
	asg.Version = 1
	asg.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "orders", Partitions: []int32{0, 2}}, {Topic: "payments", Partitions: []int32{}}}
	asg.UserData = []byte{}
	gv := kmsg.NewGroupMetadataValue()
	gv.Version = 3
	gv.ProtocolType = "consumer"
	gv.Generation = 7
	gv.Protocol = strp("cooperative-sticky")
	gv.Leader = strp("kgo-1")
	gv.CurrentStateTimestamp = ts0 + 5
	m := kmsg.NewGroupMetadataValueMember()
	m.MemberID, m.ClientID, m.ClientHost = "kgo-1", "kgo", "/127.0.0.1"
	m.RebalanceTimeoutMillis, m.SessionTimeoutMillis = 60000, 45000
	m.Subscription, m.Assignment = sub.AppendTo(nil), asg.AppendTo(nil)
	gv.Members = []kmsg.GroupMetadataValueMember{m}

	// An empty group (after the last member left), v0: no
	// currentStateTimestamp, null protocol and leader.
	empty := kmsg.NewGroupMetadataValue()
	empty.ProtocolType = "consumer"
	empty.Generation = 8

	// A non-consumer protocol group keeps its members' bytes as base64.
	connect := kmsg.NewGroupMetadataValue()
	connect.Version = 2
	connect.ProtocolType = "connect"
	connect.Generation = 1
	connect.Protocol = strp("sessioned")
	connect.Leader = strp("w1")
	connect.CurrentStateTimestamp = ts0
	cm := kmsg.NewGroupMetadataValueMember()
	cm.MemberID, cm.ClientID, cm.ClientHost, cm.SessionTimeoutMillis = "w1", "c", "h", 10000
	cm.Subscription, cm.Assignment = m.Subscription, []byte{}
	connect.Members = []kmsg.GroupMetadataValueMember{cm}

	v4 := kmsg.OffsetCommitValue{Version: 4, Offset: 9, LeaderEpoch: 2, Metadata: "", CommitTimestamp: ts0}
	v4.TopicID = [16]byte{1, 2, 3}
	v4.UnknownTags.Set(7, []byte{1})

	recs := []record.BatchRecord{
		{Key: offsetKey(1, "g1", "orders", 3), Value: offsetValue(kmsg.OffsetCommitValue{Version: 3, Offset: 42, LeaderEpoch: 5, Metadata: "m", CommitTimestamp: ts0})},
		{Key: offsetKey(0, "g1", "orders", 3), Value: offsetValue(kmsg.OffsetCommitValue{Version: 1, Offset: 43, Metadata: "", CommitTimestamp: ts0, ExpireTimestamp: ts0 + 1000})},
		{Key: offsetKey(1, "g1", "orders", 3), Value: offsetValue(kmsg.OffsetCommitValue{Version: 0, Offset: 44, Metadata: "x", CommitTimestamp: ts0})},
		{Key: offsetKey(1, "g1", "orders", 3), Value: offsetValue(kmsg.OffsetCommitValue{Version: 2, Offset: 45, Metadata: "", CommitTimestamp: ts0})},
		{Key: offsetKey(1, "g1", "orders", 3), Value: offsetValue(v4)},
		{Key: groupKey("g1"), Value: gv.AppendTo(nil)},
		{Key: groupKey("g1"), Value: empty.AppendTo(nil)},
		{Key: groupKey("connect-cluster"), Value: connect.AppendTo(nil)},
		{Key: offsetKey(1, "g1", "orders", 3), Value: nil},
		{Key: groupKey("g1"), Value: nil},
		{Key: []byte{0, 9, 0, 1, 'x'}, Value: []byte{0, 0}},
		{Key: offsetKey(1, "g1", "orders", 3), Value: []byte{0, 3, 0, 0}},
		{Key: offsetKey(1, "g1", "orders", 3)[:5], Value: []byte{0, 3}},
		{Key: offsetKey(1, "g1", "orders", 3), Value: []byte{0}},
		{Key: []byte{1}, Value: []byte{0, 3}},
		{Key: nil, Value: []byte("v")},
	}
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
	}
	b := mustBatch(t, record.BatchOptions{BaseOffset: 100, BaseTimestamp: ts0}, recs)
	path := filepath.Join(t.TempDir(), "00000000000000000100.log")
	write(t, path, b)
	out, errOut, err := run(t, Options{Files: []string{path}, OffsetsDecoder: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	ocKey := ` key: {"type":"1","data":{"group":"g1","topic":"orders","partition":3}}`
	want := []string{
		ocKey + ` payload: {"version":"3","data":{"offset":42,"leaderEpoch":5,"metadata":"m","commitTimestamp":1700000000000}}`,
		` key: {"type":"0","data":{"group":"g1","topic":"orders","partition":3}} payload: {"version":"1","data":{"offset":43,"metadata":"","commitTimestamp":1700000000000,"expireTimestamp":1700000001000}}`,
		ocKey + ` payload: {"version":"0","data":{"offset":44,"metadata":"x","commitTimestamp":1700000000000}}`,
		ocKey + ` payload: {"version":"2","data":{"offset":45,"metadata":"","commitTimestamp":1700000000000}}`,
		ocKey + ` payload: {"version":"4","data":{"offset":9,"leaderEpoch":2,"metadata":"","commitTimestamp":1700000000000}}`,
		` key: {"type":"2","data":{"group":"g1"}} payload: {"version":"3","data":{"protocolType":"consumer","generation":7,` +
			`"protocol":"cooperative-sticky","leader":"kgo-1","currentStateTimestamp":1700000000005,"members":[{"memberId":"kgo-1",` +
			`"groupInstanceId":null,"clientId":"kgo","clientHost":"/127.0.0.1","rebalanceTimeout":60000,"sessionTimeout":45000,` +
			`"subscription":{"topics":["orders","payments"],"userData":"dWQ=","ownedPartitions":[{"topic":"orders","partitions":[0,2]}]},` +
			`"assignment":{"assignedPartitions":[{"topic":"orders","partitions":[0,2]},{"topic":"payments","partitions":[]}],"userData":""}}]}}`,
		` key: {"type":"2","data":{"group":"g1"}} payload: {"version":"0","data":{"protocolType":"consumer","generation":8,"protocol":null,"leader":null,"members":[]}}`,
		` key: {"type":"2","data":{"group":"connect-cluster"}} payload: {"version":"2","data":{"protocolType":"connect","generation":1,` +
			`"protocol":"sessioned","leader":"w1","currentStateTimestamp":1700000000000,"members":[{"memberId":"w1","clientId":"c",` +
			`"clientHost":"h","rebalanceTimeout":-1,"sessionTimeout":10000,"subscription":"AAEAAAACAAZvcmRlcnMACHBheW1lbnRzAAAAAnVkAAAAAQAGb3JkZXJzAAAAAgAAAAAAAAAC","assignment":""}]}}`,
		ocKey + ` payload: <DELETE>`,
		` key: {"type":"2","data":{"group":"g1"}} payload: <DELETE>`,
		` key: Unknown record type 9 at offset 110, skipping.`,
		` key: Error at offset 111, skipping. Could not read record with version 3 from value's buffer due to: not enough data.`,
		` key: Error at offset 112, skipping. Could not read record with version 1 from key's buffer due to: not enough data.`,
		` key: Error at offset 113, skipping. Could not read version from value's buffer.`,
		` key: Error at offset 114, skipping. Could not read version from key's buffer.`,
		` key: Failed to decode message at offset 115 using offset topic decoder (message had a missing key)`,
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| offset: ") {
			_, rest, ok := strings.Cut(l, "headerKeys: []")
			if !ok {
				t.Fatalf("record line without headerKeys: %q", l)
			}
			got = append(got, rest)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d record lines, want %d:\n%s", len(got), len(want), out)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("offset %d:\n got %s\nwant %s", 100+i, got[i], want[i])
		}
	}
	if !strings.Contains(out, fmt.Sprintf("| offset: 100 CreateTime: %d keySize: %d valueSize: ", ts0, len(recs[0].Key))) {
		t.Errorf("record metadata not printed as before:\n%s", out)
	}
}

// Strings are written as Jackson writes them, not as encoding/json would.
func TestAppendJSONString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`plain`, `"plain"`},
		{"q\"b\\s/", `"q\"b\\s/"`},
		{"\b\t\n\f\r\x00\x1f\x7f", `"\b\t\n\f\r\u0000\u001F` + "\x7f\""},
		{"<&> é \u2028 😀", "\"<&> é \u2028 😀\""},
		{"a\xffb", "\"a\uFFFDb\""},
		{"\xe2\x82A", "\"\uFFFDA\""},               // truncated 3-byte sequence: one replacement
		{"\xf0\x9f\x98", "\"\uFFFD\""},             // truncated 4-byte sequence
		{"\xed\xa0\x80", "\"\uFFFD\uFFFD\uFFFD\""}, // a surrogate: three
		{"\xc0\xaf", "\"\uFFFD\uFFFD\""},           // overlong
	} {
		if got := string(appendJSONString(nil, tc.in)); got != tc.want {
			t.Errorf("appendJSONString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
