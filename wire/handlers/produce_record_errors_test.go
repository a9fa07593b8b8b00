package handlers

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
)

// recordIndexes lists the Index of each RecordError.
func recordIndexes(rs []record.RecordError) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Index)
	}
	return out
}

// errorRecordOffsets lists the RelativeOffset (batch_index) of each
// ErrorRecords entry.
func errorRecordOffsets(p kmsg.ProduceResponseTopicPartition) []int {
	var out []int
	for _, er := range p.ErrorRecords {
		out = append(out, int(er.RelativeOffset))
	}
	return out
}

// faultyRecords builds a 5-record batch timestamped ts with codec where
// the records in noKey have no key and those in skewed are ts+skew.
func faultyRecords(t testing.TB, codec record.Codec, ts, skew int64, noKey, skewed []int) []byte {
	t.Helper()
	recs := make([]record.BatchRecord, 5)
	for i := range recs {
		recs[i] = record.BatchRecord{Key: []byte{'k', byte('0' + i)}, Value: []byte("v")}
		if slices.Contains(noKey, i) {
			recs[i].Key = nil
		}
		if slices.Contains(skewed, i) {
			recs[i].TimestampDelta = skew
		}
	}
	b, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: ts, PartitionLeaderEpoch: -1, Codec: codec}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// KIP-467 through the handler: every record at fault gets its own
// ErrorRecords entry (v8+), the partition Kafka's summary message; v7 and
// earlier answer the error code alone. Nothing is appended.
func TestProduceReportsEveryRecordAtFault(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.MessageTimestampDifferenceMaxMs = 60_000
	compacted := cfg
	compacted.Compact = true
	tpC := storage.TopicPartition{Topic: "compacted", Partition: 0}
	e := newDataEnv(t, cfg, tpA)
	if errs := e.m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tpC, Leader: 0, ISR: []int32{0}, Config: compacted}}); len(errs) != 0 {
		t.Fatal(errs)
	}
	now := time.Now().UnixMilli()
	const keyMsg = "Compacted topic cannot accept message without key"
	for _, tc := range []struct {
		name    string
		tp      storage.TopicPartition
		records []byte
		want    *kerr.Error
		summary string // the partition's ErrorMessage (prefix)
		perRec  []string
	}{
		{"keyless records 1 and 3 on a compacted topic", tpC, faultyRecords(t, record.CodecNone, now, 0, []int{1, 3}, nil), kerr.InvalidRecord,
			"One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='" + keyMsg + "'), RecordError(batchIndex=3, message='" + keyMsg + "')]",
			[]string{keyMsg, keyMsg}},
		{"keyless records, lz4", tpC, faultyRecords(t, record.CodecLZ4, now, 0, []int{1, 3}, nil), kerr.InvalidRecord,
			"One or more records have been rejected due to 2 record errors in total", []string{keyMsg, keyMsg}},
		{"timestamps of records 1 and 3 out of range", tpA, faultyRecords(t, record.CodecNone, now, -3_600_000, nil, []int{1, 3}), kerr.InvalidTimestamp,
			"One or more records have been rejected due to invalid timestamp", []string{"Timestamp ", "Timestamp "}},
		{"timestamps, gzip", tpA, faultyRecords(t, record.CodecGzip, now, 3_600_000, nil, []int{1, 3}), kerr.InvalidTimestamp,
			"One or more records have been rejected due to invalid timestamp", []string{"Timestamp ", "Timestamp "}},
		{"keyless record 1, timestamp of record 3", tpC, faultyRecords(t, record.CodecNone, now, 3_600_000, []int{1}, []int{3}), kerr.InvalidTimestamp,
			"One or more records have been rejected due to invalid timestamp", []string{keyMsg, "Timestamp "}},
	} {
		for v := int16(3); v <= 11; v++ {
			p := e.produce(v, 1, tc.tp, tc.records)
			if p.ErrorCode != tc.want.Code || p.BaseOffset != -1 {
				t.Fatalf("%s v%d: code %d offset %d, want %s", tc.name, v, p.ErrorCode, p.BaseOffset, tc.want.Message)
			}
			if v < 8 {
				if len(p.ErrorRecords) != 0 || p.ErrorMessage != nil {
					t.Fatalf("%s v%d: error records %+v message %v before v8", tc.name, v, p.ErrorRecords, p.ErrorMessage)
				}
				continue
			}
			if got := errorRecordOffsets(p); !slices.Equal(got, []int{1, 3}) {
				t.Fatalf("%s v%d: error records at %v, want exactly [1 3]", tc.name, v, got)
			}
			for i, er := range p.ErrorRecords {
				if er.ErrorMessage == nil || !strings.HasPrefix(*er.ErrorMessage, tc.perRec[i]) {
					t.Errorf("%s v%d: record %d message %v, want %q…", tc.name, v, er.RelativeOffset, er.ErrorMessage, tc.perRec[i])
				}
			}
			if p.ErrorMessage == nil || !strings.HasPrefix(*p.ErrorMessage, tc.summary) {
				t.Errorf("%s v%d: message %v, want %q…", tc.name, v, p.ErrorMessage, tc.summary)
			}
		}
	}
	for _, tp := range []storage.TopicPartition{tpA, tpC} {
		if h, _ := e.m.Get(tp); h.View().LogEndOffset != 0 {
			t.Fatalf("%s: a rejected batch was appended: leo %d", tp.Topic, h.View().LogEndOffset)
		}
	}
}
