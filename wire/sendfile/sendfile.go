// Package sendfile writes byte ranges of files to sockets without copying
// them through user space, at explicit file offsets.
//
// Why not (*net.TCPConn).ReadFrom: on Linux it sends from the file's SHARED
// offset (and moves it), so concurrent fetches of one segment file corrupt
// each other (Go passes no offset to sendfile(2), so the kernel reads from
// and advances the file's own offset). SendfileAt passes the offset to
// sendfile(2) explicitly and never touches the file offset; CopyAt is the
// pread+write fallback for connections that are not plain TCP (TLS, pipes in
// tests) and for platforms without sendfile.
package sendfile

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
)

// chunkSize is the pread buffer of the copy fallback.
const chunkSize = 64 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// CopyAt writes n bytes of f starting at byte offset off to w using pread
// (f.ReadAt) and w.Write through a pooled 64 KiB buffer. It does not use or
// move f's shared offset. It returns the bytes written; a file shorter than
// off+n yields io.ErrUnexpectedEOF.
func CopyAt(w io.Writer, f *os.File, off int64, n int) (int, error) {
	if n < 0 || off < 0 {
		return 0, errors.New("sendfile: negative offset or length")
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	written := 0
	for written < n {
		want := min(n-written, len(buf))
		m, rerr := f.ReadAt(buf[:want], off+int64(written))
		if m > 0 {
			wn, werr := w.Write(buf[:m])
			written += wn
			if werr != nil {
				return written, werr
			}
		}
		if rerr != nil && written < n {
			if errors.Is(rerr, io.EOF) {
				return written, io.ErrUnexpectedEOF
			}
			return written, rerr
		}
	}
	return written, nil
}

// Send writes n bytes of f from offset off to w: with sendfile(2) when w is
// a *net.TCPConn (and the platform has it), else with CopyAt.
func Send(w io.Writer, f *os.File, off int64, n int) (int, error) {
	if c, ok := w.(*net.TCPConn); ok {
		return SendfileAt(c, f, off, n)
	}
	return CopyAt(w, f, off, n)
}
