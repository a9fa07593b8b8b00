package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// legacyPyScript produces n records to <prefix>-<codec> for every codec
// the old formats allow with kafka-python pinned to an old api_version
// (so Produce v0/v2 with magic 0/1 message sets) and consumes them back:
// with a group, half then commit, then a new consumer resumes from the
// commit; without (0.8.2) by assignment from the beginning (ListOffsets
// v0, Fetch v0). It also consumes <prefix>-new-<codec>, written by
// franz-go as record batches, through the same old protocol.
const legacyPyScript = `
import sys
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
addr, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[4])
ver = tuple(int(x) for x in sys.argv[3].split('.'))
group = ver >= (0, 9)
codecs = ['none', 'gzip', 'snappy', 'lz4']

def consume(topic, gid, want, start):
    kw = dict(bootstrap_servers=addr, api_version=ver, auto_offset_reset='earliest',
              enable_auto_commit=False, consumer_timeout_ms=15000)
    if gid is None:
        c = KafkaConsumer(group_id=None, **kw)
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, start)
    else:
        c = KafkaConsumer(topic, group_id=gid, **kw)
    got = []
    for m in c:
        got.append(m)
        if len(got) == want:
            break
    if gid is not None:
        c.commit()
    c.close()
    return got

def check(topic, got, n, first, vfmt):
    offs = [m.offset for m in got]
    assert offs == list(range(first, first + len(got))), (topic, offs[:10])
    for m in got:
        assert m.value == (vfmt % m.offset).encode(), (topic, m.offset, m.value)
        assert m.key == (b'k%d' % (m.offset % 5)), (topic, m.offset, m.key)

try:
    import xxhash
except ImportError:
    xxhash = None
for codec in codecs:
    if codec == 'lz4' and ver < (0, 10) and xxhash is None:
        print('skip lz4: kafka-python needs python3-xxhash for magic-0 lz4', file=sys.stderr)
        continue
    topic = '%s-%s' % (prefix, codec)
    p = KafkaProducer(bootstrap_servers=addr, api_version=ver, acks=1, linger_ms=20,
                      compression_type=None if codec == 'none' else codec)
    futs = [p.send(topic, key=b'k%d' % (i % 5), value=b'old-%d' % i, partition=0) for i in range(n)]
    p.flush()
    offs = sorted(f.get(timeout=30).offset for f in futs)
    p.close()
    assert offs == list(range(n)), (topic, offs[:10])
    half = n // 2
    if group:
        gid = 'g-' + topic
        a = consume(topic, gid, half, 0)
        check(topic, a, n, 0, 'old-%d')
        b = consume(topic, gid, n - half, None)  # resumes at the commit
        check(topic, b, n, half, 'old-%d')
        if ver >= (0, 10):
            assert all(m.timestamp > 1500000000000 for m in a + b), (topic, a[0].timestamp)
    else:
        a = consume(topic, None, n, 0)
        check(topic, a, n, 0, 'old-%d')
    newt = '%s-new-%s' % (prefix, codec)
    got = consume(newt, 'g-' + newt if group else None, n, 0)
    check(newt, got, n, 0, 'new-%d')
print('ok')
`

var legacyCodecs = map[string]kgo.CompressionCodec{
	"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(),
}

// TestLegacyKafkaPython: kafka-python pinned to (0,10,1), (0,10,0), (0,9)
// and (0,8,2) produces and consumes with every codec the old formats
// allow, reads what franz-go wrote, and franz-go reads what it wrote.
func TestLegacyKafkaPython(t *testing.T) {
	py := "/usr/bin/python3"
	ok := exec.Command(py, "-c", "import kafka, snappy, lz4").Run() == nil
	harness.NeedTool(t, ok, "kafka-python with python-snappy and python-lz4")
	b := harness.StartBroker(t, nil)
	f := filepath.Join(t.TempDir(), "legacy.py")
	if err := os.WriteFile(f, []byte(legacyPyScript), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 60
	for _, ver := range []string{"0.10.1", "0.10.0", "0.9", "0.8.2"} {
		t.Run(ver, func(t *testing.T) {
			prefix := "py" + strings.ReplaceAll(ver, ".", "")
			for codec, cc := range legacyCodecs {
				createTopic(t, b, prefix+"-"+codec, 1, nil)
				createTopic(t, b, prefix+"-new-"+codec, 1, nil)
				produceNew(t, b, prefix+"-new-"+codec, cc, n)
			}
			out := run(t, 4*time.Minute, "", py, f, b.Addr(), prefix, ver, fmt.Sprint(n))
			if strings.TrimSpace(out) != "ok" {
				t.Fatalf("kafka-python %s said %q", ver, out)
			}
			// A new client reads the old clients' records (stored as batches).
			for codec := range legacyCodecs {
				if codec == "lz4" && ver < "0.10" && exec.Command(py, "-c", "import xxhash").Run() != nil {
					continue // skipped by the script (magic-0 lz4 needs python3-xxhash)
				}
				recs := consumeN(t, b, prefix+"-"+codec, n, time.Minute)
				for _, r := range recs {
					if want := fmt.Sprintf("old-%d", r.Offset); string(r.Value) != want {
						t.Fatalf("%s-%s offset %d: %q, want %q", prefix, codec, r.Offset, r.Value, want)
					}
				}
			}
		})
	}
}

// produceNew writes n keyed records "new-<offset>" to partition 0 with
// franz-go (record batches, magic 2) compressed with cc.
func produceNew(t *testing.T, b *harness.Broker, topic string, cc kgo.CompressionCodec, n int) {
	t.Helper()
	cl := b.Client(kgo.ProducerBatchCompression(cc), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%5)), Value: []byte(fmt.Sprintf("new-%d", i)), Partition: 0}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", topic, err)
	}
}
