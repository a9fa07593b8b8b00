//go:build !linux

package sendfile

import (
	"net"
	"os"
)

// SendfileAt sends n bytes of f from offset off to c. On this platform it is
// the pread+write fallback (CopyAt); f's shared offset is not used.
func SendfileAt(c *net.TCPConn, f *os.File, off int64, n int) (int, error) {
	return CopyAt(c, f, off, n)
}
