//go:build linux

package sendfile

import (
	"errors"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// SendfileAt sends n bytes of f, starting at byte offset off, to c with
// sendfile(2) at an explicit offset: f's shared offset is neither used nor
// moved, so many connections may send from one *os.File concurrently.
//
// The sendfile loop runs inside c's raw Write (which holds c's write lock
// and parks on the netpoller on EAGAIN, honouring c's write deadline),
// nested inside f's raw Read (which holds a reference on f's descriptor, so
// a concurrent Close cannot recycle it mid-send). It returns the bytes sent;
// a file shorter than off+n yields io.ErrUnexpectedEOF after the bytes that
// existed were sent.
func SendfileAt(c *net.TCPConn, f *os.File, off int64, n int) (int, error) {
	if n < 0 || off < 0 {
		return 0, errors.New("sendfile: negative offset or length")
	}
	if n == 0 {
		return 0, nil
	}
	crc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	frc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	written := 0
	var serr, werr error
	rerr := frc.Read(func(src uintptr) bool {
		werr = crc.Write(func(dst uintptr) bool {
			for written < n {
				// Linux caps one sendfile at 0x7ffff000 bytes; the loop continues.
				m, e := unix.Sendfile(int(dst), int(src), &off, n-written)
				if m > 0 {
					written += m
				}
				switch {
				case e == unix.EAGAIN:
					return false // park on the netpoller; called again when writable
				case e == unix.EINTR:
					continue
				case e != nil:
					serr = e
					return true
				case m == 0:
					serr = io.ErrUnexpectedEOF // file shorter than the region
					return true
				}
			}
			return true
		})
		return true
	})
	if rerr != nil {
		return written, rerr
	}
	if werr != nil {
		return written, werr
	}
	if errno, ok := serr.(unix.Errno); ok {
		return written, os.NewSyscallError("sendfile", errno)
	}
	if serr != nil {
		return written, serr
	}
	return written, nil
}
