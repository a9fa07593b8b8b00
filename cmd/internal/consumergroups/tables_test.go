package consumergroups

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

func i64(v int64) *int64 { return &v }

// Whole tables, byte for byte, as Kafka 3.9's ConsumerGroupCommand lays
// them out (its printf widths), each row on its own line. The expected
// text is written out by hand from Kafka's format strings.
func TestTablesAsKafkaPrintsThem(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(*strings.Builder)
		want  string
	}{{
		// GROUP/TOPIC/CONSUMER-ID/HOST at least 15, PARTITION 10, offsets
		// and LAG 15, CLIENT-ID unpadded; "-" for what is not known.
		name: "offsets",
		write: func(b *strings.Builder) {
			writeOffsets(b, []offsetRow{
				{Group: "g", Topic: "t", Partition: 0, CurrentOffset: i64(4), LogEndOffset: i64(10), ConsumerID: "c-1", Host: "/127.0.0.1", ClientID: "me"},
				{Group: "g", Topic: "t", Partition: 1, LogEndOffset: i64(10), ConsumerID: "c-1", Host: "/127.0.0.1", ClientID: "me"},
				{Group: "g", Topic: "t", Partition: 2, CurrentOffset: i64(6)},
			})
		},
		want: "\n" +
			"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n" +
			"g               t               0          4               10              6               c-1             /127.0.0.1      me\n" +
			"g               t               1          -               10              -               c-1             /127.0.0.1      me\n" +
			"g               t               2          6               -               -               -               -               -\n",
	}, {
		// Long values widen their column (GROUP, TOPIC, CONSUMER-ID, HOST)
		// or overflow a fixed one (PARTITION and the offsets are not cut).
		name: "offsets wide",
		write: func(b *strings.Builder) {
			writeOffsets(b, []offsetRow{
				{Group: "a-rather-long-group", Topic: "a-long-topic-name-x", Partition: 12, CurrentOffset: i64(123456789012345678), LogEndOffset: i64(123456789012345679),
					ConsumerID: "consumer-1-5f0c3e8e-0000-4c1e", Host: "/127.0.0.1", ClientID: "consumer-1"},
			})
		},
		want: "\n" +
			"GROUP               TOPIC               PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID                   HOST            CLIENT-ID\n" +
			"a-rather-long-group a-long-topic-name-x 12         123456789012345678 123456789012345679 1               consumer-1-5f0c3e8e-0000-4c1e /127.0.0.1      consumer-1\n",
	}, {
		// #PARTITIONS is 15 wide and followed by a space, even without
		// --verbose.
		name: "members",
		write: func(b *strings.Builder) {
			writeMembers(b, []memberRow{
				{Group: "g", ConsumerID: "c-1", Host: "/127.0.0.1", ClientID: "me", Assignment: []tp{{"t", 0}, {"t", 1}}},
				{Group: "g", ConsumerID: "c-2", Host: "/127.0.0.1", ClientID: "you"},
			}, false)
		},
		want: "\n" +
			"GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     \n" +
			"g               c-1             /127.0.0.1      me              2               \n" +
			"g               c-2             /127.0.0.1      you             0               \n",
	}, {
		// --verbose: ASSIGNMENT after #PARTITIONS' trailing space; a
		// group.instance.id adds GROUP-INSTANCE-ID (at least 17 wide).
		name: "members verbose, static member",
		write: func(b *strings.Builder) {
			writeMembers(b, []memberRow{
				{Group: "g", ConsumerID: "c-1", GroupInstanceID: "i1", Host: "/127.0.0.1", ClientID: "me", Assignment: []tp{{"u", 3}, {"t", 10}, {"t", 2}}},
				{Group: "g", ConsumerID: "c-2", Host: "/127.0.0.1", ClientID: "you"},
			}, true)
		},
		want: "\n" +
			"GROUP           CONSUMER-ID     GROUP-INSTANCE-ID HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT\n" +
			"g               c-1             i1                /127.0.0.1      me              3               t(2,10), u(3)\n" +
			"g               c-2                               /127.0.0.1      you             0               -\n",
	}, {
		// The GROUP column takes the coordinator's width (at least 25);
		// "host:port  (id)" has two spaces in Kafka 3.9; an Empty group's
		// ASSIGNMENT-STRATEGY is blank.
		name: "state",
		write: func(b *strings.Builder) {
			writeState(b, stateRow{Group: "g", CoordinatorHost: "127.0.0.1", CoordinatorPort: 9092, CoordinatorID: 0, State: "Empty"})
		},
		want: "\n" +
			"GROUP                     COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS\n" +
			"g                         127.0.0.1:9092  (0)                            Empty           0\n",
	}, {
		name: "state, long coordinator",
		write: func(b *strings.Builder) {
			writeState(b, stateRow{Group: "g", CoordinatorHost: "broker-17.kafka.example.com", CoordinatorPort: 9092, CoordinatorID: 17, AssignmentStrategy: "range", State: "Stable", Members: 2})
		},
		want: "\n" +
			"GROUP                                  COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS\n" +
			"g                                      broker-17.kafka.example.com:9092  (17) range                Stable          2\n",
	}, {
		// --list --state: GROUP is the widest id (at least 15) plus 10,
		// STATE 20, no blank line first.
		name: "list state",
		write: func(b *strings.Builder) {
			writeGroupStates(b, []groupState{{"g", "Stable"}, {"a-twenty-char-group-", "Empty"}})
		},
		want: "GROUP                          STATE               \n" +
			"g                              Stable              \n" +
			"a-twenty-char-group-           Empty               \n",
	}, {
		name:  "list state, no groups",
		write: func(b *strings.Builder) { writeGroupStates(b, nil) },
		want:  "GROUP                     STATE               \n",
	}, {
		// GROUP and TOPIC 30, PARTITION 10, NEW-OFFSET 15.
		name: "reset plan",
		write: func(b *strings.Builder) {
			writeResetPlan(b, []plannedOffset{{group: "g", Offset: kadmOffset("t", 0, 4)}, {group: "g", Offset: kadmOffset("t", 1, 10)}})
		},
		want: "\n" +
			"GROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n" +
			"g                              t                              0          4              \n" +
			"g                              t                              1          10             \n",
	}, {
		name:  "reset plan, no partitions",
		write: func(b *strings.Builder) { writeResetPlan(b, nil) },
		want:  "\nGROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n",
	}} {
		var b strings.Builder
		c.write(&b)
		if got := b.String(); got != c.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s\n(got %q)", c.name, got, c.want, got)
		}
	}
}

// Java pads by UTF-16 code units: "é" is one, "𝄞" two.
func TestPadCountsUTF16(t *testing.T) {
	if got := pad("é", 3); got != "é  " {
		t.Errorf("pad(é) = %q", got)
	}
	if got := pad("𝄞", 3); got != "𝄞 " {
		t.Errorf("pad(𝄞) = %q", got)
	}
	if got := pad("long", 2); got != "long" {
		t.Errorf("pad cut a long value: %q", got)
	}
}

func kadmOffset(topic string, p int32, at int64) kadm.Offset {
	return kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1}
}
