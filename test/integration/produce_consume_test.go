package integration

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// TestRoundTripKeyedRecordsWithHeaders produces 100,000 keyed records with
// headers over 3 partitions and reads them back: per-partition order, keys,
// values, headers and timestamps must be intact and offsets dense from 0.
func TestRoundTripKeyedRecordsWithHeaders(t *testing.T) {
	const total = 100_000
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "roundtrip", 3, nil)

	cl := b.Client(kgo.DefaultProduceTopic("roundtrip"), kgo.ProducerLinger(5*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := time.UnixMilli(time.Now().UnixMilli())
	sent := make([]*kgo.Record, total)
	for i := 0; i < total; i++ {
		sent[i] = &kgo.Record{
			Key:       []byte(fmt.Sprintf("key-%d", i%977)),
			Value:     []byte(fmt.Sprintf("value-%07d", i)),
			Headers:   []kgo.RecordHeader{{Key: "seq", Value: []byte(fmt.Sprint(i))}, {Key: "empty", Value: []byte{}}},
			Timestamp: base.Add(time.Duration(i) * time.Millisecond),
		}
	}
	var perr error
	for _, r := range sent {
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil && perr == nil {
				perr = err
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if perr != nil {
		t.Fatalf("produce: %v", perr)
	}

	got := consumeN(t, b, "roundtrip", total, 3*time.Minute)
	// Each sent record now has its partition and offset filled in by the client.
	byPos := map[string]*kgo.Record{}
	for _, r := range sent {
		byPos[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = r
	}
	next := map[int32]int64{}
	for _, r := range got {
		if r.Offset != next[r.Partition] {
			t.Fatalf("partition %d: offset %d, want %d (order or gap)", r.Partition, r.Offset, next[r.Partition])
		}
		next[r.Partition]++
		want := byPos[fmt.Sprintf("%d/%d", r.Partition, r.Offset)]
		if want == nil {
			t.Fatalf("record at %d/%d was never acknowledged there", r.Partition, r.Offset)
		}
		if !bytes.Equal(r.Key, want.Key) || !bytes.Equal(r.Value, want.Value) {
			t.Fatalf("at %d/%d got %q=%q, want %q=%q", r.Partition, r.Offset, r.Key, r.Value, want.Key, want.Value)
		}
		if !r.Timestamp.Equal(want.Timestamp) {
			t.Fatalf("at %d/%d timestamp %v, want %v", r.Partition, r.Offset, r.Timestamp, want.Timestamp)
		}
		if len(r.Headers) != 2 || r.Headers[0].Key != "seq" || !bytes.Equal(r.Headers[0].Value, want.Headers[0].Value) ||
			r.Headers[1].Key != "empty" || len(r.Headers[1].Value) != 0 {
			t.Fatalf("at %d/%d headers %+v, want %+v", r.Partition, r.Offset, r.Headers, want.Headers)
		}
	}
	if len(next) != 3 {
		t.Fatalf("records landed in %d partitions, want 3", len(next))
	}
}

// TestNullAndEmptyKeysAndValuesStayDistinct checks that a null key, an empty
// key, a null value (tombstone) and an empty value come back as they went in.
func TestNullAndEmptyKeysAndValuesStayDistinct(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "nulls", 1, nil)
	cl := b.Client(kgo.DefaultProduceTopic("nulls"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cases := []*kgo.Record{
		{Key: nil, Value: nil},
		{Key: []byte{}, Value: []byte{}},
		{Key: nil, Value: []byte{}},
		{Key: []byte{}, Value: nil},
		{Key: []byte("k"), Value: []byte("v")},
	}
	for _, r := range cases {
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	got := consumeN(t, b, "nulls", len(cases), time.Minute)
	for i, r := range got {
		w := cases[i]
		if (r.Key == nil) != (w.Key == nil) || (r.Value == nil) != (w.Value == nil) ||
			!bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) {
			t.Errorf("record %d: key %#v value %#v, want key %#v value %#v", i, r.Key, r.Value, w.Key, w.Value)
		}
	}
}
