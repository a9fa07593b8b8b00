// Package kgocapture records batches exactly as a real franz-go (kgo)
// producer sends them. It starts franz-go's in-memory kfake cluster on
// 127.0.0.1, puts a ControlKey hook on Produce (API key 0) that copies
// every partition's Records bytes out of each ProduceRequest, and produces
// with an idempotent kgo.Client once per codec. No network beyond loopback
// and no files are involved.
//
// Only tests import it: storage/record seeds FuzzValidate with the batches,
// storage seeds FuzzAppend and writes them into a segment for its golden
// test. (cmd/internal/clientutil/clienttest also wraps kfake, but it is
// internal to cmd and has no Produce hook, so it cannot serve here.)
package kgocapture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Codec is one compression codec a batch is captured with.
type Codec struct {
	Name string
	// Attr is the codec's value in the batch attributes' low three bits
	// (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
	Attr int8
	kgo  kgo.CompressionCodec
}

// Codecs lists every codec, in attribute order; Batches captures batches
// for each, in this order.
var Codecs = []Codec{
	{"none", 0, kgo.NoCompression()},
	{"gzip", 1, kgo.GzipCompression()},
	{"snappy", 2, kgo.SnappyCompression()},
	{"lz4", 3, kgo.Lz4Compression()},
	{"zstd", 4, kgo.ZstdCompression()},
}

// Record is one record as it was handed to kgo.Client.Produce. Nil and
// empty (non-nil, zero length) keys, values and header values are
// distinct on the wire, and the records below use both.
type Record struct {
	Key, Value []byte
	Headers    []kgo.RecordHeader
	Timestamp  int64 // ms since the epoch (CreateTime)
}

// Batch is one record batch captured from a ProduceRequest.
type Batch struct {
	Codec Codec
	// Bytes is the batch as kgo sent it: base offset 0, partition leader
	// epoch -1, producer id/epoch and first sequence from the idempotent
	// producer, CRC-32C computed by kgo.
	Bytes []byte
	// Records are what was produced into this batch, in offset order.
	Records []Record
}

// BatchesPerCodec is how many batches each codec's producer sends (one
// per flush); the later ones have a non-zero first sequence.
const BatchesPerCodec = 2

// BaseTimestamp is the timestamp of the first record of the first batch.
const BaseTimestamp int64 = 1_700_000_000_000

// Timeout bounds the whole capture.
const Timeout = 30 * time.Second

var (
	once     sync.Once
	captured []Batch
	errCap   error
)

// Batches returns the captured batches: BatchesPerCodec for each of Codecs
// in order, each kgo-encoded with its codec. The capture runs once per
// test binary (the result is shared, so callers must clone Bytes before
// modifying them); a failure fails tb.
func Batches(tb testing.TB) []Batch {
	tb.Helper()
	once.Do(func() { captured, errCap = capture() })
	if errCap != nil {
		tb.Fatalf("capturing kgo batches: %v", errCap)
	}
	return captured
}

// records returns the records of batch number flush of a codec. They
// cover keys (nil, empty, set), values (nil tombstone, empty, small,
// large and compressible so every codec actually shrinks the batch — kgo
// sends uncompressed otherwise), headers (none, several, empty key, nil
// and empty values) and a timestamp below the batch's first one (a
// negative timestamp delta).
func records(codec, flush int) []Record {
	ts := BaseTimestamp + int64(codec)*10_000 + int64(flush)*1_000
	if flush > 0 {
		return []Record{{Key: []byte(fmt.Sprintf("again-%d", flush)), Value: []byte(strings.Repeat("tail ", 40)), Timestamp: ts}}
	}
	return []Record{
		{Key: []byte("k0"), Value: []byte(strings.Repeat("gregor ", 50)), Timestamp: ts,
			Headers: []kgo.RecordHeader{{Key: "h1", Value: []byte("v1")}, {Key: "h2", Value: nil}}},
		{Key: nil, Value: []byte("nil key"), Timestamp: ts + 1},
		{Key: []byte("k2"), Value: nil, Timestamp: ts + 2},
		{Key: []byte{}, Value: []byte{}, Timestamp: ts + 3,
			Headers: []kgo.RecordHeader{{Key: "", Value: []byte{}}}},
		{Key: []byte("k4"), Value: bytes.Repeat([]byte("0123456789abcdef"), 256), Timestamp: ts - 5},
		{Key: []byte("k5"), Value: []byte("last"), Timestamp: ts + 7,
			Headers: []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("22")}, {Key: "c", Value: []byte("333")}}},
	}
}

func topicOf(c Codec) string { return "kgocapture-" + c.Name }

func capture() ([]Batch, error) {
	topics := make([]string, len(Codecs))
	for i, c := range Codecs {
		topics[i] = topicOf(c)
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topics...))
	if err != nil {
		return nil, err
	}
	defer cluster.Close()

	// Producers run one at a time and each Flush sends to one partition,
	// so everything captured between two flushes is that flush's batch.
	// (Not keyed by topic: Produce v13+ names topics by ID only.)
	var mu sync.Mutex
	var sent [][]byte // Records of each partition entry, in arrival order
	cluster.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		pr := req.(*kmsg.ProduceRequest)
		mu.Lock()
		defer mu.Unlock()
		for _, t := range pr.Topics {
			for _, p := range t.Partitions {
				sent = append(sent, bytes.Clone(p.Records))
			}
		}
		return nil, nil, false // observe only: kfake handles the request
	})

	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	// codec runs one producer through BatchesPerCodec flushes of c.
	codec := func(ci int, c Codec) ([]Batch, error) {
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(cluster.ListenAddrs()...),
			kgo.DefaultProduceTopic(topicOf(c)),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerBatchCompression(c.kgo),
			kgo.RequiredAcks(kgo.AllISRAcks()), // idempotence (kgo's default) needs acks=all
			kgo.ManualFlushing(),               // one Flush, one batch
		)
		if err != nil {
			return nil, err
		}
		defer cl.Close()
		var out []Batch
		for flush := 0; flush < BatchesPerCodec; flush++ {
			recs := records(ci, flush)
			if err := produce(ctx, cl, recs); err != nil {
				return nil, fmt.Errorf("%s batch %d: %w", c.Name, flush, err)
			}
			mu.Lock()
			got := dedupe(sent)
			sent = nil
			mu.Unlock()
			if len(got) == 0 {
				return nil, fmt.Errorf("%s batch %d: nothing captured", c.Name, flush)
			}
			// A retried request normally resends the same bytes, but a
			// retry after a producer epoch bump (or any re-encoding)
			// differs; the last set sent is the one that was acknowledged,
			// and every set is still a batch kgo encoded.
			b, err := oneBatch(got[len(got)-1], c, len(recs))
			if err != nil {
				return nil, fmt.Errorf("%s batch %d: %w", c.Name, flush, err)
			}
			out = append(out, Batch{Codec: c, Bytes: b, Records: recs})
		}
		return out, nil
	}
	var out []Batch
	for ci, c := range Codecs {
		for attempt := 1; ; attempt++ {
			bs, err := codec(ci, c)
			if err == nil {
				out = append(out, bs...)
				break
			}
			// A flush can go out as two batches when the topic's metadata
			// arrives while kgo drains it (records move from its
			// unknown-topic buffer one at a time; seen on a loaded
			// machine): try again with a fresh producer (sequences from 0).
			if !errors.Is(err, errSplit) || attempt == 3 {
				return nil, err
			}
		}
	}
	return out, nil
}

// produce hands recs to cl and flushes them as one batch, waiting for
// every ack.
func produce(ctx context.Context, cl *kgo.Client, recs []Record) error {
	var wg sync.WaitGroup
	errs := make([]error, len(recs))
	for i, r := range recs {
		kr := &kgo.Record{
			Key:       bytes.Clone(r.Key), // Clone keeps nil nil and empty empty
			Value:     bytes.Clone(r.Value),
			Timestamp: time.UnixMilli(r.Timestamp),
			Partition: 0,
		}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: bytes.Clone(h.Value)})
		}
		wg.Add(1)
		cl.Produce(ctx, kr, func(_ *kgo.Record, err error) { errs[i] = err; wg.Done() })
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// dedupe drops repeats (a retried request resends the same bytes).
func dedupe(sets [][]byte) [][]byte {
	var out [][]byte
	for _, s := range sets {
		seen := false
		for _, o := range out {
			seen = seen || bytes.Equal(o, s)
		}
		if !seen {
			out = append(out, s)
		}
	}
	return out
}

// errSplit: a flush went out as more than one batch.
var errSplit = errors.New("flush split across batches")

// oneBatch checks that records holds exactly one v2 batch of n records
// compressed with c, and returns it.
func oneBatch(records []byte, c Codec, n int) ([]byte, error) {
	var b kmsg.RecordBatch
	if err := b.ReadFrom(records); err != nil {
		return nil, err
	}
	if size := int(b.Length) + 12; size != len(records) {
		return nil, fmt.Errorf("%w: records hold %d bytes, first batch %d", errSplit, len(records), size)
	}
	if int(b.NumRecords) != n && b.Magic == 2 {
		return nil, fmt.Errorf("%w: %d of %d records in the batch", errSplit, b.NumRecords, n)
	}
	if b.Magic != 2 || int(b.NumRecords) != n || int8(b.Attributes&7) != c.Attr || b.ProducerID < 0 || b.ProducerEpoch < 0 || b.FirstSequence < 0 {
		return nil, fmt.Errorf("unexpected batch: magic %d, %d records (want %d), attributes %#x (want codec %d), producer %d/%d seq %d",
			b.Magic, b.NumRecords, n, b.Attributes, c.Attr, b.ProducerID, b.ProducerEpoch, b.FirstSequence)
	}
	return records, nil
}
