package sendfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// pattern returns n deterministic bytes that differ at every position modulo
// a prime, so a shifted or interleaved range never matches.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((i*7 + i/251) % 256)
	}
	return b
}

func tempFile(t testing.TB, data []byte) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// tcpPair returns a connected loopback pair (client side, server side).
func tcpPair(t testing.TB) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := ln.Accept(); ch <- res{c, err} }()
	cli, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { cli.Close(); r.c.Close() })
	return cli.(*net.TCPConn), r.c.(*net.TCPConn)
}

func TestSendfileAtSendsExactRangeAndKeepsFileOffset(t *testing.T) {
	data := pattern(1 << 20)
	f := tempFile(t, data)
	if _, err := f.Seek(12345, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	cli, srv := tcpPair(t)
	const off, n = 1000, 700_001
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, n)
		_, err := io.ReadFull(cli, b)
		if err != nil {
			b = nil
		}
		got <- b
	}()
	m, err := SendfileAt(srv, f, off, n)
	if err != nil || m != n {
		t.Fatalf("SendfileAt = %d, %v; want %d, nil", m, err, n)
	}
	if b := <-got; !bytes.Equal(b, data[off:off+n]) {
		t.Fatal("received bytes differ from the file range")
	}
	pos, _ := f.Seek(0, io.SeekCurrent)
	if pos != 12345 {
		t.Fatalf("file offset moved to %d; want 12345", pos)
	}
}

func TestSendfileAtShortFile(t *testing.T) {
	f := tempFile(t, pattern(100))
	cli, srv := tcpPair(t)
	go io.Copy(io.Discard, cli)
	m, err := SendfileAt(srv, f, 50, 100)
	if !errors.Is(err, io.ErrUnexpectedEOF) || m != 50 {
		t.Fatalf("SendfileAt past EOF = %d, %v; want 50, ErrUnexpectedEOF", m, err)
	}
	if m, err := SendfileAt(srv, f, 0, 0); m != 0 || err != nil {
		t.Fatalf("zero-length send = %d, %v", m, err)
	}
	if _, err := SendfileAt(srv, f, -1, 1); err == nil {
		t.Fatal("negative offset accepted")
	}
}

func TestCopyAtFallback(t *testing.T) {
	data := pattern(300_000)
	f := tempFile(t, data)
	var buf bytes.Buffer
	m, err := CopyAt(&buf, f, 77, 200_000)
	if err != nil || m != 200_000 || !bytes.Equal(buf.Bytes(), data[77:200_077]) {
		t.Fatalf("CopyAt = %d, %v (bytes equal: %v)", m, err, bytes.Equal(buf.Bytes(), data[77:200_077]))
	}
	buf.Reset()
	m, err = CopyAt(&buf, f, 299_990, 20)
	if !errors.Is(err, io.ErrUnexpectedEOF) || m != 10 {
		t.Fatalf("CopyAt past EOF = %d, %v; want 10, ErrUnexpectedEOF", m, err)
	}
	// Send on a non-TCP writer takes the fallback.
	buf.Reset()
	if m, err := Send(&buf, f, 5, 10); err != nil || m != 10 || !bytes.Equal(buf.Bytes(), data[5:15]) {
		t.Fatalf("Send(non-TCP) = %d, %v", m, err)
	}
}

// TestConcurrentSendsFromOneSharedFile is the §4.4 experiment as a test:
// many connections send overlapping ranges of ONE *os.File at once; every
// byte must match (ReadFrom-with-Seek corrupts this).
func TestConcurrentSendsFromOneSharedFile(t *testing.T) {
	data := pattern(4 << 20)
	f := tempFile(t, data)
	const conns = 16
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := 0; i < conns; i++ {
		cli, srv := tcpPair(t)
		off := int64(i * 200_000)
		n := 1<<20 + i*1000
		wg.Add(2)
		go func() {
			defer wg.Done()
			if m, err := Send(srv, f, off, n); err != nil || m != n {
				errs <- fmt.Errorf("conn %d: send %d, %v", i, m, err)
			}
		}()
		go func() {
			defer wg.Done()
			cli.SetReadDeadline(time.Now().Add(20 * time.Second))
			b := make([]byte, n)
			if _, err := io.ReadFull(cli, b); err != nil {
				errs <- fmt.Errorf("conn %d: read: %v", i, err)
				return
			}
			if !bytes.Equal(b, data[off:off+int64(n)]) {
				errs <- fmt.Errorf("conn %d: corrupt range", i)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
