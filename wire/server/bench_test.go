package server

import (
	"bufio"
	"encoding/binary"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// benchPipeline writes b.N copies of req on one connection from a second
// goroutine while this one reads (and discards) the responses, so the
// server's writer path is what is measured.
func benchPipeline(b *testing.B, req kmsg.Request) {
	e := startServer(b, nil)
	benchConn(b, dialRaw(b, e.addr), req)
}

// benchConn is benchPipeline's loop on an open connection c.
func benchConn(b *testing.B, c *rawClient, req kmsg.Request) {
	frame := c.fmtr.AppendRequest(nil, req, 1)
	errc := make(chan error, 1)
	b.ResetTimer()
	go func() {
		w := bufio.NewWriterSize(c.c, 64<<10)
		for i := 0; i < b.N; i++ {
			if _, err := w.Write(frame); err != nil {
				errc <- err
				return
			}
		}
		errc <- w.Flush()
	}()
	r := bufio.NewReaderSize(c.c, 256<<10)
	var sz [4]byte
	for i := 0; i < b.N; i++ {
		if _, err := io.ReadFull(r, sz[:]); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Discard(int(binary.BigEndian.Uint32(sz[:]))); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSmallResponses: pipelined Metadata v1 (no topics, ~40-byte
// responses); see responses/s.
func BenchmarkSmallResponses(b *testing.B) {
	benchPipeline(b, metadataReq(1))
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "responses/s")
}

// BenchmarkFetchSendfile: pipelined Fetch v11 of one 1 MiB region of the
// shared segment file, sent with sendfile over loopback; see MB/s.
func BenchmarkFetchSendfile(b *testing.B) {
	b.SetBytes(1 << 20)
	benchPipeline(b, fetchReq(11, [][2]int64{{4096, 1 << 20}}))
}

// BenchmarkFetchTLSCopy is BenchmarkFetchSendfile over an SSL listener:
// no sendfile under TLS, so the 1 MiB region goes pread → pooled 64 KiB
// buffer → TLS records. Compare MB/s and allocs/op with the sendfile one.
func BenchmarkFetchTLSCopy(b *testing.B) {
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	benchPipelineTLS(b, fetchReq(11, [][2]int64{{4096, 1 << 20}}))
}
