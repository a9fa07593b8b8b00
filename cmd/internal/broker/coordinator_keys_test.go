package broker

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/actors/txncoordinator"
	"gregor/storage/record"
)

// The coordinator keys reach the internal topics: offsets.load.buffer.size
// and transaction.state.log.load.buffer.size size the loads,
// offsets.commit.required.acks 1 appends without waiting for the ISR, and
// request.timeout.ms bounds the transaction coordinator's appends.
func TestCoordinatorKeysReachTopics(t *testing.T) {
	cfg, _ := configOnFreePort(t, map[string]string{
		"offsets.load.buffer.size":               "1234",
		"transaction.state.log.load.buffer.size": "4321",
		"offsets.commit.required.acks":           "1",
		"request.timeout.ms":                     "777",
	})
	if o := newOffsetsTopic(cfg); o.spec.loadBuffer != 1234 || !o.spec.leaderAcks {
		t.Fatalf("__consumer_offsets spec %+v", o.spec)
	}
	if x := newTxnTopic(cfg); x.spec.loadBuffer != 4321 || x.spec.leaderAcks {
		t.Fatalf("__transaction_state spec %+v", x.spec)
	}
	if o := txncoordinator.OptionsFromBroker(cfg, nil, nil, nil, nil); o.AppendTimeout != 777*time.Millisecond {
		t.Fatalf("txn AppendTimeout %v", o.AppendTimeout)
	}
	d, _ := configOnFreePort(t, map[string]string{})
	if o := newOffsetsTopic(d); o.spec.loadBuffer != 5<<20 || o.spec.leaderAcks {
		t.Fatalf("default spec %+v", o.spec)
	}
}

// offsets.topic.compression.codec=1: the __consumer_offsets segment holds
// gzip batches; with offsets.load.buffer.size=1 (one batch per read) a
// restarted broker loads them back.
func TestOffsetsCompressedAndReloaded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg, _ := configOnFreePort(t, map[string]string{
		"log.dirs":                        dir,
		"offsets.topic.num.partitions":    "1",
		"offsets.topic.compression.codec": "1",
		"offsets.load.buffer.size":        "1",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	withBroker(t, cfg, func(cl *kgo.Client) {
		adm := kadm.NewClient(cl)
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
			t.Fatal(err)
		}
		for at := int64(1); at <= 3; at++ { // three batches to load one at a time
			var os kadm.Offsets
			os.Add(kadm.Offset{Topic: "t", Partition: 0, At: at, LeaderEpoch: -1})
			resp, err := adm.CommitOffsets(ctx, "g", os)
			if err == nil {
				err = resp.Error()
			}
			if err != nil {
				t.Fatalf("commit %d: %v", at, err)
			}
		}
	})
	seg, err := os.ReadFile(filepath.Join(dir, "__consumer_offsets-0", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for len(seg) >= record.HeaderSize {
		h, b, err := record.ValidateIntegrity(seg)
		if err != nil {
			t.Fatal(err)
		}
		if h.Codec() != record.CodecGzip {
			t.Fatalf("batch at %d: codec %v, want gzip", h.BaseOffset, h.Codec())
		}
		n++
		seg = seg[len(b):]
	}
	if n < 3 {
		t.Fatalf("%d batches in __consumer_offsets-0", n)
	}
	withBroker(t, cfg, func(cl *kgo.Client) {
		got, err := kadm.NewClient(cl).FetchOffsets(ctx, "g")
		if err == nil {
			err = got.Error()
		}
		if o, ok := got.Lookup("t", 0); err != nil || !ok || o.At != 3 {
			t.Fatalf("after restart: %+v %v", o, err)
		}
	})
}
