package record

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// indexes lists the Index of each RecordError.
func indexes(rs []RecordError) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Index)
	}
	return out
}

// faultyBatch builds an n-record batch at base timestamp 10_000 where the
// records in noKey lack a key and those in badTs are 5000 ms off.
func faultyBatch(t testing.TB, codec Codec, n int, noKey, badTs []int) (Header, []byte) {
	t.Helper()
	recs := make([]BatchRecord, n)
	for i := range recs {
		recs[i] = BatchRecord{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte("v")}
		if slices.Contains(noKey, i) {
			recs[i].Key = nil
		}
		if slices.Contains(badTs, i) {
			recs[i].TimestampDelta = 5000
		}
	}
	b, err := BuildBatch(BatchOptions{BaseTimestamp: 10_000, PartitionLeaderEpoch: -1, Codec: codec}, recs)
	if err != nil {
		t.Fatal(err)
	}
	h, batch, err := Validate(b)
	if err != nil {
		t.Fatal(err)
	}
	return h, batch
}

// KIP-467: every record breaking a per-record rule is reported, not just
// the first, with Kafka's per-record and summary messages.
func TestCheckRecordsReportsEveryRecordAtFault(t *testing.T) {
	rules := Rules{MaxUncompressed: 1 << 20, KeyRequired: true, Now: 10_000, MaxTimestampDiff: 1000}
	for _, c := range []Codec{CodecNone, CodecLZ4} {
		// Keys missing on records 1 and 3 of 5.
		h, batch := faultyBatch(t, c, 5, []int{1, 3}, nil)
		_, err := CheckRecords(h, batch, rules)
		var ie *InvalidError
		if !errors.As(err, &ie) || !slices.Equal(indexes(ie.RecordErrors()), []int{1, 3}) || ie.RecordIndex != -1 {
			t.Fatalf("%s: got %#v, want an InvalidError at records 1 and 3", c, err)
		}
		const keyMsg = "Compacted topic cannot accept message without key"
		for _, r := range ie.Records {
			if r.Message != keyMsg {
				t.Errorf("%s: record %d message %q", c, r.Index, r.Message)
			}
		}
		want := "One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: [" +
			"RecordError(batchIndex=1, message='" + keyMsg + "'), RecordError(batchIndex=3, message='" + keyMsg + "')]"
		if ie.Reason != want {
			t.Errorf("%s: reason %q, want %q", c, ie.Reason, want)
		}
		if err := ValidateRecords(h, batch, 1<<20, true); !errors.As(err, &ie) || !slices.Equal(indexes(ie.Records), []int{1, 3}) {
			t.Errorf("%s: ValidateRecords: %v", c, err)
		}

		// Timestamps out of range on records 1 and 3.
		h, batch = faultyBatch(t, c, 5, nil, []int{1, 3})
		_, err = CheckRecords(h, batch, rules)
		var te *TimestampError
		if !errors.As(err, &te) || !slices.Equal(indexes(te.RecordErrors()), []int{1, 3}) || te.RecordIndex != -1 {
			t.Fatalf("%s: got %#v, want a TimestampError at records 1 and 3", c, err)
		}
		if te.Reason != "One or more records have been rejected due to invalid timestamp" {
			t.Errorf("%s: reason %q", c, te.Reason)
		}
		if m := te.Records[1].Message; m != "Timestamp 15000 of message with offset 3 is out of range. The timestamp should be within [9000, 11000]" {
			t.Errorf("%s: record 3 message %q", c, m)
		}

		// Both kinds: INVALID_TIMESTAMP wins and lists every record at
		// fault; a record breaking both rules is named once, for its key.
		h, batch = faultyBatch(t, c, 5, []int{0, 2}, []int{2, 4})
		_, err = CheckRecords(h, batch, rules)
		if !errors.As(err, &te) || !slices.Equal(indexes(te.Records), []int{0, 2, 4}) {
			t.Fatalf("%s: mixed: got %v, want a TimestampError at records 0, 2 and 4", c, err)
		}
		if !strings.HasPrefix(te.Records[1].Message, "Compacted") || !strings.HasPrefix(te.Records[2].Message, "Timestamp") {
			t.Errorf("%s: mixed: %+v", c, te.Records)
		}

		// Damage still stops the walk and is reported alone.
		h, batch = faultyBatch(t, c, 5, []int{0}, nil)
		h.RecordCount = 6
		if _, err := CheckRecords(h, batch, rules); !errors.As(err, &ie) || ie.Records != nil || !strings.Contains(ie.Reason, "holds 5") {
			t.Errorf("%s: short batch: got %v", c, err)
		}
	}
}

// The summary shows the first three; at most MaxRecordErrors are listed,
// all are counted.
func TestCheckRecordsBoundsRecordErrors(t *testing.T) {
	n := MaxRecordErrors + 5
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	h, batch := faultyBatch(t, CodecZstd, n, all, nil)
	_, err := CheckRecords(h, batch, Rules{MaxUncompressed: 1 << 20, KeyRequired: true})
	var ie *InvalidError
	if !errors.As(err, &ie) || len(ie.Records) != MaxRecordErrors || ie.Records[MaxRecordErrors-1].Index != MaxRecordErrors-1 {
		t.Fatalf("got %d record errors (%T), want the first %d", len(ie.Records), err, MaxRecordErrors)
	}
	if !strings.Contains(ie.Reason, fmt.Sprintf("due to %d record errors in total", n)) || strings.Count(ie.Reason, "RecordError(") != 3 || !strings.Contains(ie.Reason, "batchIndex=2,") {
		t.Errorf("reason %q", ie.Reason)
	}
	h, batch = faultyBatch(t, CodecZstd, n, nil, all)
	_, err = CheckRecords(h, batch, Rules{MaxUncompressed: 1 << 20, Now: 10_000, MaxTimestampDiff: 1000})
	var te *TimestampError
	if !errors.As(err, &te) || len(te.Records) != MaxRecordErrors || te.Records[MaxRecordErrors-1].Message == "" {
		t.Fatalf("timestamps: got %T with %d record errors, want the first %d", err, len(te.Records), MaxRecordErrors)
	}
}

// Collecting record errors costs nothing for a valid uncompressed batch.
func TestCheckRecordsValidBatchDoesNotAllocate(t *testing.T) {
	h, batch := faultyBatch(t, CodecNone, 200, nil, nil)
	rules := Rules{MaxUncompressed: 1 << 20, KeyRequired: true, Now: 10_000, MaxTimestampDiff: 1000}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := CheckRecords(h, batch, rules); err != nil {
			t.Fatal(err)
		}
		if err := ValidateRecords(h, batch, 1<<20, true); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per valid batch, want 0", allocs)
	}
}
