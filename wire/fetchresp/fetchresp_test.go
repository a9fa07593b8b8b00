package fetchresp

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/wire"
)

// materialise concatenates a body's chunks, reading regions from their files.
func materialise(t testing.TB, b *wire.Body) []byte {
	t.Helper()
	var out []byte
	for _, c := range b.Chunks {
		if c.Bytes != nil {
			out = append(out, c.Bytes...)
			continue
		}
		buf := make([]byte, c.Region.Len)
		if _, err := c.Region.File.ReadAt(buf, c.Region.Pos); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf...)
	}
	return out
}

func randTags(r *rand.Rand, flexible bool) kmsg.Tags {
	var t kmsg.Tags
	if !flexible || r.IntN(4) != 0 {
		return t
	}
	for i := 0; i < 1+r.IntN(3); i++ {
		v := make([]byte, r.IntN(200))
		for j := range v {
			v[j] = byte(r.IntN(256))
		}
		t.Set(uint32(10+r.IntN(300)), v) // above the known tags
	}
	return t
}

func randString(r *rand.Rand) string {
	n := r.IntN(8)
	if r.IntN(5) == 0 {
		n = 120 + r.IntN(200) // multi-byte compact length
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	return string(b)
}

// randResponse builds a random FetchResponse and, per partition, either
// regions of f or in-memory RecordBatches (nil, empty or bytes).
func randResponse(r *rand.Rand, version int16, f *os.File, fileData []byte) (*kmsg.FetchResponse, [][][]storage.Region) {
	flex := version >= 12
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	resp.ThrottleMillis = r.Int32()
	resp.ErrorCode = int16(r.IntN(100))
	resp.SessionID = r.Int32()
	regs := make([][][]storage.Region, r.IntN(4))
	for ti := range regs {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = randString(r)
		for i := range t.TopicID {
			t.TopicID[i] = byte(r.IntN(256))
		}
		t.UnknownTags = randTags(r, flex)
		np := r.IntN(5)
		regs[ti] = make([][]storage.Region, np)
		for pi := 0; pi < np; pi++ {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = r.Int32()
			p.ErrorCode = int16(r.IntN(120))
			p.HighWatermark = r.Int64()
			p.LastStableOffset = r.Int64()
			p.LogStartOffset = r.Int64()
			if r.IntN(2) == 0 {
				p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
				for i := 0; i < r.IntN(3); i++ {
					a := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
					a.ProducerID, a.FirstOffset = r.Int64(), r.Int64()
					a.UnknownTags = randTags(r, flex)
					p.AbortedTransactions = append(p.AbortedTransactions, a)
				}
			}
			p.PreferredReadReplica = r.Int32N(5) - 1
			if r.IntN(2) == 0 {
				p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = r.Int32(), r.Int64()
			}
			if r.IntN(2) == 0 {
				p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = r.Int32(), r.Int32()
				p.CurrentLeader.UnknownTags = randTags(r, flex)
			}
			// Each tagged struct is present when any one field differs from
			// its default, so vary the fields independently.
			if r.IntN(3) == 0 {
				p.SnapshotID.EndOffset = r.Int64()
			}
			if r.IntN(3) == 0 {
				p.SnapshotID.Epoch = r.Int32()
			}
			if r.IntN(4) == 0 {
				p.DivergingEpoch.EndOffset = r.Int64()
			}
			if r.IntN(4) == 0 {
				p.CurrentLeader.LeaderEpoch = r.Int32()
			}
			p.UnknownTags = randTags(r, flex)
			switch r.IntN(5) {
			case 0: // nil regions, nil RecordBatches → null
			case 1: // nil regions, in-memory bytes
				p.RecordBatches = fileData[:r.IntN(300)]
			case 2: // empty non-nil regions → empty records
				regs[ti][pi] = []storage.Region{}
			default:
				for i := 0; i < 1+r.IntN(4); i++ {
					pos := r.Int64N(int64(len(fileData)))
					n := r.Int64N(int64(len(fileData)) - pos + 1)
					if r.IntN(4) == 0 {
						n = 0 // skipped
					}
					regs[ti][pi] = append(regs[ti][pi], storage.Region{File: f, Pos: pos, Len: n})
				}
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if r.IntN(2) == 0 {
		for i := 0; i < 1+r.IntN(3); i++ {
			b := kmsg.NewFetchResponseBroker()
			b.NodeID, b.Host, b.Port = r.Int32(), randString(r), r.Int32()
			if r.IntN(2) == 0 {
				rack := randString(r)
				b.Rack = &rack
			}
			b.UnknownTags = randTags(r, flex)
			resp.Brokers = append(resp.Brokers, b)
		}
	}
	resp.UnknownTags = randTags(r, flex)
	return resp, regs
}

// TestGoldenAgainstKmsg: with the regions' bytes materialised, Build must
// equal kmsg's AppendTo byte for byte, at every version.
func TestGoldenAgainstKmsg(t *testing.T) {
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i*31 + i>>9)
	}
	p := filepath.Join(t.TempDir(), "seg.log")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	maxV := kmsg.NewPtrFetchResponse().MaxVersion()
	for v := int16(0); v <= maxV; v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(v), 42))
			for iter := 0; iter < 200; iter++ {
				resp, regs := randResponse(r, v, f, data)
				released := 0
				body := Build(v, resp, func(ti, pi int) []storage.Region { return regs[ti][pi] }, func() { released++ })
				got := materialise(t, body)
				if int64(len(got)) != body.Size {
					t.Fatalf("iter %d: Size = %d, materialised %d bytes", iter, body.Size, len(got))
				}
				// Materialise regions into RecordBatches for kmsg.
				for ti := range resp.Topics {
					for pi := range resp.Topics[ti].Partitions {
						if regs[ti][pi] == nil {
							continue
						}
						rb := []byte{}
						for _, rg := range regs[ti][pi] {
							rb = append(rb, data[rg.Pos:rg.Pos+rg.Len]...)
						}
						resp.Topics[ti].Partitions[pi].RecordBatches = rb
					}
				}
				want := resp.AppendTo(nil)
				if !bytes.Equal(got, want) {
					t.Fatalf("iter %d: Build differs from kmsg AppendTo (%d vs %d bytes)", iter, len(got), len(want))
				}
				// And the bytes decode back with kmsg.
				back := kmsg.NewPtrFetchResponse()
				back.Version = v
				if err := back.ReadFrom(got); err != nil {
					t.Fatalf("iter %d: kmsg cannot decode Build output: %v", iter, err)
				}
				body.Release()
				if released != 1 {
					t.Fatalf("release ran %d times", released)
				}
			}
		})
	}
}

func TestRegionsBecomeChunks(t *testing.T) {
	resp := kmsg.NewPtrFetchResponse()
	tp := kmsg.NewFetchResponseTopic()
	tp.Topic = "t"
	tp.Partitions = []kmsg.FetchResponseTopicPartition{kmsg.NewFetchResponseTopicPartition()}
	resp.Topics = append(resp.Topics, tp)
	f := &os.File{} // never read here
	body := Build(12, resp, func(int, int) []storage.Region {
		return []storage.Region{{File: f, Pos: 10, Len: 100}, {File: f, Pos: 500, Len: 0}, {File: f, Pos: 200, Len: 28}}
	}, nil)
	var regions, bytesN int64
	nReg := 0
	for _, c := range body.Chunks {
		if c.Bytes == nil {
			nReg++
			regions += c.Region.Len
		} else {
			bytesN += int64(len(c.Bytes))
		}
	}
	if nReg != 2 || regions != 128 || body.Size != regions+bytesN {
		t.Fatalf("regions %d (%d bytes), Size %d, bytes %d", nReg, regions, body.Size, bytesN)
	}
}

func BenchmarkBuild(b *testing.B) {
	resp := kmsg.NewPtrFetchResponse()
	for i := 0; i < 10; i++ {
		tp := kmsg.NewFetchResponseTopic()
		tp.Topic = fmt.Sprintf("topic-%d", i)
		for j := 0; j < 10; j++ {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = int32(j)
			tp.Partitions = append(tp.Partitions, p)
		}
		resp.Topics = append(resp.Topics, tp)
	}
	regs := []storage.Region{{Pos: 0, Len: 1 << 20}}
	b.ReportAllocs()
	for b.Loop() {
		Build(12, resp, func(int, int) []storage.Region { return regs }, nil)
	}
}
