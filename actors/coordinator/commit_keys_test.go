package coordinator

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage/record"
)

// offsets.commit.timeout.ms bounds a commit's append and its replication:
// a held append is answered REQUEST_TIMED_OUT once it passes, and
// offsets.topic.compression.codec compresses what the group writes.
func TestOffsetsCommitTimeoutAndCodec(t *testing.T) {
	const timeout = 300 * time.Millisecond
	topic := NewMemTopic()
	c := startFromBroker(t, map[string]string{
		"offsets.commit.timeout.ms":       "300",
		"offsets.topic.compression.codec": "4", // zstd
	}, topic, time.Now)
	member, gen := joinAndSync(t, c, "g")
	p := c.PartitionFor("g")
	if code := wait(t, commitAsync(c, "g", member, gen, "orders", 0, 7)); code != 0 {
		t.Fatalf("commit: %d", code)
	}
	bs := topic.Batches(p)
	if len(bs) == 0 {
		t.Fatal("nothing written")
	}
	for i, b := range bs {
		h, err := record.ParseHeader(b)
		if err != nil || h.Codec() != record.CodecZstd {
			t.Fatalf("batch %d: codec %v (%v); want zstd (offsets.topic.compression.codec=4)", i, h.Codec(), err)
		}
	}
	if off := offsetOf(fetchAll(t, c, "g"), "orders", 0); off != 7 {
		t.Fatalf("offset %d read back from the compressed batch", off)
	}

	release := topic.HoldAppends()
	defer release(nil)
	start := time.Now()
	code := wait(t, commitAsync(c, "g", member, gen, "orders", 0, 8))
	if took := time.Since(start); code != kerr.RequestTimedOut.Code || took < timeout || took > 20*time.Second {
		t.Fatalf("held commit: code %d after %v; want REQUEST_TIMED_OUT after offsets.commit.timeout.ms=%v", code, took, timeout)
	}
}
