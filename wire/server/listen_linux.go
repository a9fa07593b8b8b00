package server

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// listenTCP binds addr ("host:port") with listen(2)'s backlog set to
// backlog (socket.listen.backlog.size); backlog <= 0 keeps Go's choice
// (net.core.somaxconn). net.ListenConfig cannot pass a backlog, so the
// socket is made here the way Go's net package makes it (non-blocking,
// close-on-exec, SO_REUSEADDR; a wildcard or empty host is one dual-stack
// IPv6 socket, IPv4 only when the host has no IPv6) and handed to
// net.FileListener, which takes over a duplicate of the descriptor.
func listenTCP(addr string, backlog int) (net.Listener, error) {
	if backlog <= 0 {
		return net.Listen("tcp", addr)
	}
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, err
	}
	if ta.IP == nil || ta.IP.IsUnspecified() {
		ln, err := listenFD(unix.AF_INET6, &unix.SockaddrInet6{Port: ta.Port}, true, backlog, addr)
		if errors.Is(err, unix.EAFNOSUPPORT) {
			return listenFD(unix.AF_INET, &unix.SockaddrInet4{Port: ta.Port}, false, backlog, addr)
		}
		return ln, err
	}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		return listenFD(unix.AF_INET, sa, false, backlog, addr)
	}
	sa := &unix.SockaddrInet6{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To16())
	if ta.Zone != "" {
		ifi, err := net.InterfaceByName(ta.Zone)
		if err != nil {
			return nil, &net.OpError{Op: "listen", Net: "tcp", Addr: ta, Err: err}
		}
		sa.ZoneId = uint32(ifi.Index)
	}
	return listenFD(unix.AF_INET6, sa, false, backlog, addr)
}

func listenFD(family int, sa unix.Sockaddr, dualStack bool, backlog int, addr string) (net.Listener, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return nil, opError("socket", addr, err)
	}
	fail := func(op string, err error) (net.Listener, error) {
		unix.Close(fd)
		return nil, opError(op, addr, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("setsockopt", err)
	}
	if dualStack {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0); err != nil {
			return fail("setsockopt", err)
		}
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		return fail("listen", err)
	}
	f := os.NewFile(uintptr(fd), "tcp:"+addr)
	ln, err := net.FileListener(f) // duplicates the descriptor
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("listen tcp %s: %w", addr, err)
	}
	return ln, nil
}

func opError(op, addr string, err error) error {
	return &net.OpError{Op: "listen", Net: "tcp", Err: os.NewSyscallError(op, err), Addr: stringAddr(addr)}
}

// stringAddr names the address being bound in errors.
type stringAddr string

func (a stringAddr) Network() string { return "tcp" }
func (a stringAddr) String() string  { return string(a) }
