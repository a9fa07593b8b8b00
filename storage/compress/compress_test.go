package compress

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"testing"

	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kgo"
)

var codecs = []struct {
	name string
	id   int8
	kgo  kgo.CompressionCodec
}{
	{"gzip", Gzip, kgo.GzipCompression()},
	{"snappy", Snappy, kgo.SnappyCompression()},
	{"lz4", LZ4, kgo.Lz4Compression()},
	{"zstd", Zstd, kgo.ZstdCompression()},
}

// payload mixes random and repetitive bytes so every codec both matches and
// falls back to literals; sizes cross the 32 KiB xerial and 64 KiB lz4 blocks.
func payload(n int, seed int64) []byte {
	r := rand.New(rand.NewSource(seed))
	b := make([]byte, n)
	for i := 0; i < n; {
		run := min(n-i, 1+r.Intn(200))
		if r.Intn(2) == 0 {
			r.Read(b[i : i+run])
		} else {
			for j := i; j < i+run; j++ {
				b[j] = 'a' + byte(j%7)
			}
		}
		i += run
	}
	return b
}

var sizes = []int{0, 1, 100, 32<<10 + 1, 200 << 10}

func TestRoundTrip(t *testing.T) {
	for _, c := range codecs {
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%s/%d", c.name, n), func(t *testing.T) {
				src := payload(n, int64(n))
				enc, err := Encode(c.id, []byte("prefix"), src)
				if err != nil {
					t.Fatal(err)
				}
				if string(enc[:6]) != "prefix" {
					t.Fatal("Encode clobbered dst")
				}
				got, err := Decode(c.id, enc[6:], n)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, src) {
					t.Fatalf("round trip differs: %d bytes vs %d", len(got), len(src))
				}
				if n > 0 {
					if _, err := Decode(c.id, enc[6:], n-1); !errors.Is(err, ErrTooLarge) {
						t.Fatalf("limit n-1: err %v, want ErrTooLarge", err)
					}
				}
			})
		}
	}
}

// Batches compressed by franz-go's producer-side compressor decode with ours.
func TestDecodesFranzGoOutput(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			comp, err := kgo.DefaultCompressor(c.kgo)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range sizes[1:] {
				src := payload(n, 7)
				out, used := comp.Compress(new(bytes.Buffer), src)
				if int8(used) != c.id {
					t.Fatalf("kgo used codec %d", used)
				}
				got, err := Decode(c.id, out, n)
				if err != nil {
					t.Fatalf("size %d: %v", n, err)
				}
				if !bytes.Equal(got, src) {
					t.Fatalf("size %d: differs", n)
				}
			}
		})
	}
}

// Our output decodes with franz-go's consumer-side decompressor.
func TestFranzGoDecodesOurOutput(t *testing.T) {
	dec := kgo.DefaultDecompressor()
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range sizes[1:] {
				src := payload(n, 9)
				enc, err := Encode(c.id, nil, src)
				if err != nil {
					t.Fatal(err)
				}
				got, err := dec.Decompress(enc, kgo.CompressionCodecType(c.id))
				if err != nil {
					t.Fatalf("size %d: %v", n, err)
				}
				if !bytes.Equal(got, src) {
					t.Fatalf("size %d: differs", n)
				}
			}
		})
	}
}

func TestSnappyForms(t *testing.T) {
	src := payload(100<<10, 3)
	enc, _ := Encode(Snappy, nil, src)
	if !bytes.HasPrefix(enc, xerialMagic) {
		t.Fatal("snappy output is not xerial framed")
	}
	// klauspost's xerial reader is an independent decoder of the framing.
	if ref, err := xerial.Decode(enc); err != nil || !bytes.Equal(ref, src) {
		t.Fatalf("xerial.Decode of our output: %v", err)
	}
	// A raw block (librdkafka / franz-go) decodes too.
	raw := snappyEncodeRaw(src)
	if got, err := Decode(Snappy, raw, len(src)); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("raw block: %v", err)
	}
	// Two concatenated xerial streams decode to the concatenation.
	two := append(append([]byte(nil), enc...), enc...)
	if got, err := Decode(Snappy, two, 2*len(src)); err != nil || !bytes.Equal(got, append(append([]byte(nil), src...), src...)) {
		t.Fatalf("concatenated: %v", err)
	}
	// Header only = empty payload.
	if got, err := Decode(Snappy, enc[:16], 10); err != nil || len(got) != 0 {
		t.Fatalf("header only: %v %d", err, len(got))
	}
}

func TestMalformed(t *testing.T) {
	good := payload(50<<10, 5)
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			enc, _ := Encode(c.id, nil, good)
			bad := map[string][]byte{
				"garbage":   []byte("this is not compressed data at all, honest"),
				"truncated": enc[:len(enc)/2],
				"empty":     {},
			}
			flipped := append([]byte(nil), enc...)
			flipped[len(flipped)/2] ^= 0xff
			flipped[len(flipped)/3] ^= 0x55
			bad["flipped"] = flipped
			for name, in := range bad {
				dst := []byte("keep")
				out, err := AppendDecode(c.id, dst, in, 1<<20)
				if err == nil {
					// A flipped byte can land in a literal that no checksum
					// covers (snappy, lz4 without block checksums); then the
					// output must differ from the original.
					if name == "flipped" && !bytes.Equal(out[4:], good) {
						continue
					}
					t.Errorf("%s: no error", name)
					continue
				}
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) {
					t.Errorf("%s: err %v does not wrap ErrMalformed", name, err)
				}
				if string(out) != "keep" {
					t.Errorf("%s: dst not restored: %q", name, out)
				}
			}
		})
	}
	if _, err := Decode(7, []byte{1}, 10); !errors.Is(err, ErrUnknownCodec) {
		t.Errorf("codec 7: %v", err)
	}
	if _, err := Encode(5, nil, []byte{1}); !errors.Is(err, ErrUnknownCodec) {
		t.Errorf("encode codec 5: %v", err)
	}
	// xerial block length pointing past the end.
	x := append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff, 1, 2)
	if _, err := Decode(Snappy, x, 1<<20); !errors.Is(err, ErrMalformed) {
		t.Errorf("xerial overrun: %v", err)
	}
}

// A zstd frame declaring a 128 MiB window must not make the decoder
// reserve that window when the limit is 1 MiB.
func TestZstdLargeWindowBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 100 MiB")
	}
	enc, err := zstd.NewWriter(nil, zstd.WithWindowSize(zstdMaxWindow), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc.Reset(&buf)
	chunk := bytes.Repeat([]byte{'q'}, 1<<20)
	for i := 0; i < 100; i++ {
		enc.Write(chunk)
	}
	enc.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = Decode(Zstd, buf.Bytes(), 1<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v", err)
	}
	t.Logf("%d compressed bytes, allocated %d KiB", buf.Len(), (after.TotalAlloc-before.TotalAlloc)>>10)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
		t.Fatalf("allocated %d MiB", alloc>>20)
	}
}

func TestNoneHonoursLimit(t *testing.T) {
	if _, err := Decode(None, make([]byte, 10), 9); !errors.Is(err, ErrTooLarge) {
		t.Fatal(err)
	}
	src := []byte("abc")
	if got, err := Decode(None, src, 3); err != nil || &got[0] != &src[0] {
		t.Fatal("codec none must return src itself")
	}
}

var (
	bombOnce sync.Once
	bombs    map[string][]byte
)

const bombSize = 100 << 20

// bombInputs compresses 100 MiB of one repeated byte with each codec (and
// snappy also as one raw block), once per test binary.
func bombInputs(t *testing.T) map[string][]byte {
	bombOnce.Do(func() {
		src := bytes.Repeat([]byte{'z'}, bombSize)
		bombs = map[string][]byte{"snappy-raw": snappyEncodeRaw(src)}
		for _, c := range codecs {
			enc, err := Encode(c.id, nil, src)
			if err != nil {
				panic(err)
			}
			bombs[c.name] = enc
		}
	})
	return bombs
}

func TestDecompressionBombIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 100 MiB per codec")
	}
	in := bombInputs(t)
	const limit = 1 << 20
	for name, enc := range in {
		id := map[string]int8{"gzip": Gzip, "snappy": Snappy, "snappy-raw": Snappy, "lz4": LZ4, "zstd": Zstd}[name]
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Decode(id, enc, limit)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err %v, want ErrTooLarge", err)
			}
			// The output buffer is at most limit+1 bytes, grown by doubling;
			// codec state (lz4 64 KiB blocks, zstd history) adds a few MiB.
			// A decoder that materialised the payload would allocate 100 MiB.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
				t.Fatalf("allocated %d MiB decoding a %d-byte bomb with a 1 MiB limit", alloc>>20, len(enc))
			}
			t.Logf("%s: %d compressed bytes, allocated %d KiB", name, len(enc), (after.TotalAlloc-before.TotalAlloc)>>10)
		})
	}
}

// Decoding from many goroutines at once shares the pools safely (-race).
func TestConcurrentDecode(t *testing.T) {
	src := payload(40<<10, 11)
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(codecs))
	for _, c := range codecs {
		enc, _ := Encode(c.id, nil, src)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					got, err := Decode(c.id, enc, len(src))
					if err == nil && !bytes.Equal(got, src) {
						err = fmt.Errorf("%s: differs", c.name)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
