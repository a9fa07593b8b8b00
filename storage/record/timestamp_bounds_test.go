package record

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// message.timestamp.before/after.max.ms (KIP-937) bound each side on its
// own and, left at MaxInt64, take message.timestamp.difference.max.ms as
// Kafka's LogConfig does; the message carries Kafka's bounds.
func TestCheckRecordsBeforeAfter(t *testing.T) {
	// Records at 1000, 1007 and 1003; Now 1005.
	recs := []BatchRecord{{Value: []byte("a"), TimestampDelta: 0}, {Value: []byte("b"), TimestampDelta: 7}, {Value: []byte("c"), TimestampDelta: 3}}
	b, err := BuildBatch(BatchOptions{BaseTimestamp: 1000, PartitionLeaderEpoch: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	h, batch, err := Validate(b)
	if err != nil {
		t.Fatal(err)
	}
	const max = math.MaxInt64
	for _, tc := range []struct {
		name                string
		diff, before, after int64
		bad                 []int
		msg                 string // of the first bad record
	}{
		{"before 3 only", max, 3, max, []int{0}, "Timestamp 1000 of message with offset 0 is out of range. The timestamp should be within [1002, -9223372036854774804]"},
		{"after 1 only", max, max, 1, []int{1}, ""},
		{"both", max, 2, 1, []int{0, 1}, ""},
		{"difference alone", 4, max, max, []int{0}, "Timestamp 1000 of message with offset 0 is out of range. The timestamp should be within [1001, 1009]"},
		{"after overrides the difference", 4, max, 1, []int{0, 1}, ""},
		{"before overrides the difference", 4, 10, max, nil, ""},
		{"no bound", max, max, max, nil, ""},
	} {
		_, err := CheckRecords(h, batch, Rules{MaxUncompressed: 1 << 20, Now: 1005, MaxTimestampDiff: tc.diff, MaxTimestampBefore: tc.before, MaxTimestampAfter: tc.after})
		if tc.bad == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var te *TimestampError
		if !errors.As(err, &te) || !slices.Equal(indexes(te.RecordErrors()), tc.bad) {
			t.Errorf("%s: got %v, want a TimestampError at records %v", tc.name, err, tc.bad)
			continue
		}
		if tc.msg != "" && te.RecordErrors()[0].Message != tc.msg {
			t.Errorf("%s: message %q, want %q", tc.name, te.RecordErrors()[0].Message, tc.msg)
		}
	}
}
