package coordinator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/config"
)

// startFromBroker starts a coordinator with the group settings of
// server.properties keys kv (OptionsFromBroker) and the clock now.
func startFromBroker(t *testing.T, kv map[string]string, topic *MemTopic, now func() time.Time) *Coordinator {
	t.Helper()
	b, err := config.Parse(kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := OptionsFromBroker(b, topic, nil)
	opts.Config.InitialRebalanceDelay = 0
	opts.Now = now
	sys := actors.NewSystem(zap.NewNop())
	c, err := New(sys, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(); sys.Shutdown() })
	return c
}

// commitMetadata commits offset 10+i with metadata mds[i] to partition i
// of topic "t" and returns each partition's code.
func commitMetadata(t *testing.T, c *Coordinator, group, member string, gen int32, mds ...string) []int16 {
	t.Helper()
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version, r.Group, r.MemberID, r.Generation = 8, group, member, gen
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	for i, md := range mds {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = int32(i), 10+int64(i), -1, strp(md)
		rt.Partitions = append(rt.Partitions, rp)
	}
	r.Topics = append(r.Topics, rt)
	ch, reply := chanOf[*kmsg.OffsetCommitResponse]()
	c.OffsetCommit(context.Background(), r, reply)
	var codes []int16
	for _, p := range wait(t, ch).Topics[0].Partitions {
		codes = append(codes, p.ErrorCode)
	}
	return codes
}

// fetched maps partition → committed offset of topic "t" in group.
func fetched(t *testing.T, c *Coordinator, group string) map[int32]int64 {
	t.Helper()
	got := map[int32]int64{}
	for _, rt := range fetchAll(t, c, group).Topics {
		for _, p := range rt.Partitions {
			got[p.Partition] = p.Offset
		}
	}
	return got
}

// offset.metadata.max.bytes from server.properties: a partition whose
// metadata is longer gets OFFSET_METADATA_TOO_LARGE, the others of the same
// request are committed (Kafka's GroupMetadataManager.storeOffsets). The
// length is Java's String.length (UTF-16 units), not UTF-8 bytes. The
// group's own checks come first: their error is every partition's.
func TestOffsetMetadataMaxBytesFromConfig(t *testing.T) {
	topic := NewMemTopic()
	c := startFromBroker(t, map[string]string{"offset.metadata.max.bytes": "8"}, topic, time.Now)
	codes := commitMetadata(t, c, "g", "", -1,
		"12345678",             // at the limit
		"123456789",            // one over
		strings.Repeat("é", 8), // 16 bytes, 8 UTF-16 units
		strings.Repeat("😀", 4), // 16 bytes, 8 units (surrogate pairs)
		strings.Repeat("😀", 5), // 10 units
		"")
	tl := kerr.OffsetMetadataTooLarge.Code
	if want := []int16{0, tl, 0, 0, tl, 0}; !slices.Equal(codes, want) {
		t.Fatalf("codes %v, want %v", codes, want)
	}
	if got, want := fetched(t, c, "g"), map[int32]int64{0: 10, 2: 12, 3: 13, 5: 15}; !maps.Equal(got, want) {
		t.Errorf("committed %v, want %v", got, want)
	}

	// A group with a member: a commit by a non-member fails with
	// UNKNOWN_MEMBER_ID for every partition, the oversized one too, and so
	// does one whose partitions are all oversized.
	member, gen := joinAndSync(t, c, "m")
	um := kerr.UnknownMemberID.Code
	if codes := commitMetadata(t, c, "m", "", -1, "ok", "123456789"); !slices.Equal(codes, []int16{um, um}) {
		t.Errorf("non-member commit: %v, want UNKNOWN_MEMBER_ID for both", codes)
	}
	if codes := commitMetadata(t, c, "m", "", -1, "123456789"); !slices.Equal(codes, []int16{um}) {
		t.Errorf("non-member commit, all oversized: %v, want UNKNOWN_MEMBER_ID", codes)
	}
	if codes := commitMetadata(t, c, "m", member, gen, "123456789", "ok"); !slices.Equal(codes, []int16{tl, 0}) {
		t.Errorf("member commit: %v, want [TOO_LARGE 0]", codes)
	}
	if codes := commitMetadata(t, c, "m", member, gen, "123456789"); !slices.Equal(codes, []int16{tl}) {
		t.Errorf("member commit, all oversized: %v, want TOO_LARGE", codes)
	}

	// 0 allows empty (and null) metadata only.
	c0 := startFromBroker(t, map[string]string{"offset.metadata.max.bytes": "0"}, NewMemTopic(), time.Now)
	if codes := commitMetadata(t, c0, "g", "", -1, "", "x"); !slices.Equal(codes, []int16{0, tl}) {
		t.Errorf("max 0: %v, want [0 TOO_LARGE]", codes)
	}
	// The default is Kafka's 4096.
	cd := startFromBroker(t, nil, NewMemTopic(), time.Now)
	if codes := commitMetadata(t, cd, "g", "", -1, strings.Repeat("x", 4096), strings.Repeat("x", 4097)); !slices.Equal(codes, []int16{0, tl}) {
		t.Errorf("default: %v, want [0 TOO_LARGE]", codes)
	}
}

// offsets.retention.check.interval.ms from server.properties: the expiry
// check runs at that interval (not the 10-minute default), so once the
// injected clock is past offsets.retention.minutes the offsets of a group
// used only for commits are deleted within a few intervals, and the group
// left without offsets is tombstoned.
func TestOffsetsRetentionCheckIntervalFromConfig(t *testing.T) {
	var clock atomic.Int64
	t0 := time.Now()
	clock.Store(t0.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	topic := NewMemTopic()
	c := startFromBroker(t, map[string]string{
		"offsets.retention.check.interval.ms": "20",
		"offsets.retention.minutes":           "1",
	}, topic, now)
	if codes := commitMetadata(t, c, "e", "", -1, "m", "m"); !slices.Equal(codes, []int16{0, 0}) {
		t.Fatalf("commit %v", codes)
	}
	// Checks run, but nothing is due yet.
	time.Sleep(100 * time.Millisecond)
	if got := fetched(t, c, "e"); got[0] != 10 || got[1] != 11 {
		t.Fatalf("offsets before retention: %v", got)
	}
	clock.Store(t0.Add(61 * time.Second).UnixNano())
	deadline := time.Now().Add(5 * time.Second)
	for len(fetched(t, c, "e")) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("offsets still there 5 s after the retention passed: %v", fetched(t, c, "e"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The tombstones follow the cache's cleanup (Kafka's order).
	eventually(t, "2 offset and 1 group tombstones", func() (bool, string) {
		tombstones := map[KeyKind]int{}
		for _, r := range topic.Records(c.PartitionFor("e")) {
			if k, err := DecodeKey(r.Key); err == nil && r.Value == nil {
				tombstones[k.Kind]++
			}
		}
		return tombstones[KeyOffset] == 2 && tombstones[KeyGroup] == 1, fmt.Sprint(tombstones)
	})
}
